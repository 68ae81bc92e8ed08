//  QuartzFixture: generates tests/cron/fixture.txt, the reference data that
//  tests/test_cron.c checks the C cron engine (sdk/src/xxl_cron*.c) against.
//  It runs the real org.quartz.CronExpression (Quartz 2.3) over a fixed list
//  of expressions (features, edge cases, known quirks, rejections, daylight
//  saving transitions) plus a seeded pseudo-random batch, from several start
//  instants in several time zones, and prints the next 10 fire times.
//
//  Run:  java -cp /usr/share/java/quartz2.jar tests/cron/QuartzFixture.java \
//            > tests/cron/fixture.txt
//  (QF_DEBUG=1 in the environment prints each expression to stderr.)
//
//  Output format (one record per line, fields separated by TAB):
//    E <expr> <zone>        starts a block; expr escapes \t \n \r \\ as such
//    R <reason>             Quartz rejects the expression (ParseException)
//    N <start_ms> <times>   next fire times after start_ms, chained (each one
//                           is getNextValidTimeAfter(previous)), in epoch ms,
//                           separated by spaces; up to 10; "END" follows when
//                           Quartz returned null, "THROW <class>" when
//                           getNextValidTimeAfter threw, "HANG" when it
//                           looped for more than 2 seconds (Quartz bug),
//                           "CUT" where the answer depends on the current
//                           year (see stable()): stop comparing there.
//  The output does not depend on the day it is generated (see stable()).

import org.quartz.CronExpression;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.*;

public class QuartzFixture {
    static final StringBuilder out = new StringBuilder();
    static final String[] ALL_ZONES = {"UTC", "America/New_York", "Europe/London",
        "Australia/Lord_Howe", "Asia/Shanghai"};
    static final String[] DST_ZONES = {"America/New_York", "Europe/London", "Australia/Lord_Howe"};
    static int cases = 0, exprs = 0;

    static long ms(String iso) { return Instant.parse(iso).toEpochMilli(); }

    static final long[] COMMON_STARTS = {
        0L,                                   // 1970-01-01T00:00:00Z
        ms("2023-11-14T22:13:20.123Z"),       // non-zero milliseconds
        ms("2024-12-31T23:59:59Z"),           // year boundary
        ms("2028-02-28T12:00:00Z"),           // leap February
        ms("2040-06-15T08:30:00Z"),           // past the 2037 table
        ms("2099-11-30T00:00:00Z"),           // near the documented year limit
    };

    static String esc(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '\t') b.append("\\t");
            else if (c == '\n') b.append("\\n");
            else if (c == '\r') b.append("\\r");
            else if (c == '\\') b.append("\\\\");
            else b.append(c);
        }
        return b.toString();
    }

    //  Daylight-saving starts for a zone: around each transition in the given
    //  years: 2 h before, 10 min before, 5 s before, and 30 min after.
    static List<Long> dstStarts(String zone, int... years) {
        List<Long> r = new ArrayList<>();
        ZoneRules rules = ZoneId.of(zone).getRules();
        for (int y : years) {
            Instant t = Instant.parse(y + "-01-01T00:00:00Z");
            for (int k = 0; k < 2; k++) {
                ZoneOffsetTransition tr = rules.nextTransition(t);
                if (tr == null) break;
                long m = tr.getInstant().toEpochMilli();
                r.add(m - 7200000L); r.add(m - 600000L); r.add(m - 5000L); r.add(m + 1800000L);
                t = tr.getInstant();
            }
        }
        return r;
    }

    static void run(String expr, String[] zones, List<Long> starts) {
        exprs++;
        if (System.getenv("QF_DEBUG") != null) System.err.println(expr);
        for (String zone : zones) {
            CronExpression ce;
            out.append("E\t").append(esc(expr)).append('\t').append(zone).append('\n');
            try {
                ce = new CronExpression(expr);
            } catch (java.text.ParseException e) {
                out.append("R\t").append(esc(String.valueOf(e.getMessage()))).append('\n');
                cases++;
                return;  // rejection does not depend on the zone
            }
            ce.setTimeZone(TimeZone.getTimeZone(zone));
            for (long s : starts) {
                cases++;
                out.append("N\t").append(s).append('\t');
                Date d = new Date(s);
                boolean first = true;
                for (int i = 0; i < 10; i++) {
                    if (!first) out.append(' ');
                    first = false;
                    Object r = next(ce, d);
                    r = stable(ce, r);
                    if (r instanceof Date) {
                        d = (Date) r;
                        out.append(d.getTime());
                        continue;
                    }
                    out.append((String) r);
                    break;
                }
                out.append('\n');
            }
        }
    }

    //  Quartz's getNextValidTimeAfter can loop forever (e.g. "L-30W" in a
    //  short month), so each call runs in a worker with a time limit: the
    //  result is a Date, or "END" (null), "THROW <class>" or "HANG".
    static java.util.concurrent.ExecutorService pool = newPool();
    static java.util.concurrent.ExecutorService newPool() {
        return java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "quartz");
            t.setDaemon(true);
            worker = t;
            return t;
        });
    }
    static volatile Thread worker;
    @SuppressWarnings("deprecation")
    static Object next(CronExpression ce, Date d) {
        java.util.concurrent.Future<Object> f = pool.submit(() -> {
            try {
                Date n = ce.getNextValidTimeAfter(d);
                return n == null ? (Object) "END" : n;
            } catch (RuntimeException e) {
                return "THROW " + e.getClass().getName();
            }
        });
        try {
            return f.get(1, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            Thread w = worker;
            pool.shutdownNow();
            try { w.stop(); } catch (Throwable ignored) { }  // Java <= 19 only
            pool = newPool();
            return "HANG";
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    //  Quartz's MAX_YEAR is the current year + 100, so answers past 2100,
    //  and "no more fire times" answers that could come from reaching
    //  MAX_YEAR, would change from year to year: those become "CUT" (the
    //  checker stops comparing that chain there).
    static final long Y2101 = Instant.parse("2101-01-01T00:00:00Z").toEpochMilli();
    @SuppressWarnings("unchecked")
    static Object stable(CronExpression ce, Object r) {
        if (r instanceof Date)
            return ((Date) r).getTime() >= Y2101 ? "CUT" : r;
        if (!"END".equals(r))
            return r;
        try {
            java.lang.reflect.Field f = CronExpression.class.getDeclaredField("years");
            f.setAccessible(true);
            TreeSet<Integer> years = (TreeSet<Integer>) f.get(ce);
            return !years.isEmpty() && years.last() > 2100 ? "CUT" : r;
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(e);
        }
    }

    static List<Long> list(long... v) { List<Long> r = new ArrayList<>(); for (long x : v) r.add(x); return r; }
    static List<Long> common() { List<Long> r = new ArrayList<>(); for (long x : COMMON_STARTS) r.add(x); return r; }

    //  Features and edge cases: every zone, the common starts.
    static final String[] GENERAL = {
        "* * * * * ?", "0 * * * * ?", "0 0 * * * ?", "0 0 0 * * ?", "0 0 12 * * ?",
        "0 15 10 ? * *", "0 15 10 * * ?", "0 15 10 * * ? *", "0 15 10 * * ? 2025",
        "0 * 14 * * ?", "0 0/5 14 * * ?", "0 0/5 14,18 * * ?", "0 0-5 14 * * ?",
        "0 10,44 14 ? 3 WED", "0 15 10 ? * MON-FRI", "0 15 10 15 * ?", "0 15 10 L * ?",
        "0 15 10 L-2 * ?", "0 15 10 ? * 6L", "0 15 10 ? * 6L 2025-2027", "0 15 10 ? * 6#3",
        "0 0 12 1/5 * ?", "0 11 11 11 11 ?", "0 0/15 * * * ?", "*/5 * * * * ?",
        "3/20 * * * * ?", "50-10 * * * * ?", "0 50-10 * * * ?", "0 0 22-2 * * ?",
        "0 0 0 ? * FRI-MON", "0 0 0 1 NOV-FEB ?", "0 0 0 ? NOV-FEB MON", "0 0 0 ? DEC-JAN *",
        // seconds and minutes
        "0 59 23 31 12 ?", "59 59 23 * * ?", "0 0/7 * * * ?", "30 * * * * ?",
        "0-59/7 * * * * ?", "7,13,59 * * * * ?", "0 5/20 * * * ?", "0 55-5/5 * * * ?",
        "10-20/3 * * * * ?", "0 0 */6 * * ?", "0 0 0,12 * * ?", "0 0 23-1 * * ?",
        "0 0 8-18/2 * * ?", "0 0 9-17 ? * MON-FRI", "0 30 9 ? * 2-6", "0 0 5/7 * * ?",
        // days of month
        "0 0 0 29 * ?", "0 0 0 30 * ?", "0 0 0 31 * ?", "0 0 0 29 2 ?", "0 0 0 28,29 2 ?",
        "0 0 0 31 * ? 2025", "0 0 0 1,15,31 * ?", "0 0 0 1-7 * ?", "0 0 0 25-5 * ?",
        "0 0 0 28-3/2 * ?", "0 0 0 */10 * ?", "0 0 0 5/9 * ?", "0 0 0 31 1/2 ?",
        "0 0 0 L * ?", "0 0 0 L-1 * ?", "0 0 0 L-3 * ?", "0 0 0 L-15 * ?", "0 0 0 L-27 * ?",
        "0 0 0 L-28 * ?", "0 0 0 L-30 * ?", "0 0 0 L-0 * ?", "0 0 0 LW * ?", "0 0 0 L-3W * ?",
        "0 0 0 L-W * ?", "0 0 0 L-10W * ?", "0 0 0 L-30W * ?", "0 0 0 1W * ?", "0 0 0 2W * ?",
        "0 0 0 15W * ?", "0 0 0 28W * ?", "0 0 0 29W * ?", "0 0 0 30W * ?", "0 0 0 31W * ?",
        "0 0 0 16W 2 ?", "0 0 10 15W * ?", "0 30 8 1W * ?", "0 0 0 L 2 ?", "0 0 0 LW 2 ?",
        "0 0 0 L-1W 2 ?", "0 0 12 LW * ? 2026",
        // days of week
        "0 0 0 ? * 1L", "0 0 0 ? * 2L", "0 0 0 ? * 3L", "0 0 0 ? * 4L", "0 0 0 ? * 5L",
        "0 0 0 ? * 6L", "0 0 0 ? * 7L", "0 0 0 ? * FRIL", "0 0 0 ? * SUNL", "0 0 0 ? * 6#5",
        "0 0 0 ? * 2#5", "0 0 0 ? * 1#1", "0 0 0 ? * 7#4", "0 0 0 ? * 3#2", "0 0 0 ? * MON#2",
        "0 0 0 ? * SUN#1", "0 0 0 ? * SAT#5", "0 0 0 ? 2 2#5", "0 0 0 ? * 1-5",
        "0 0 0 ? * 2,4,6", "0 0 0 ? * SAT,SUN", "0 0 0 ? * */2", "0 0 0 ? * 1/3",
        "0 0 0 ? * L", "0 0 0 ? * TUE-TUE", "0 0 0 ? * SAT-SUN", "0 0 0 ? * 7-1",
        "0 0 0 ? * 5-3", "0 0 0 ? * MON,WED-FRI", "0 0 0 ? * SUN-SAT", "0 0 0 ? * 2/2",
        "0 0 12 ? * 1#5", "0 0 12 ? 2 1#5", "0 0 12 ? * 4#4",
        // months
        "0 0 0 1 JAN ?", "0 0 0 1 jan ?", "0 0 0 1 Feb ?", "0 0 0 1 */3 ?", "0 0 0 1 2/4 ?",
        "0 0 0 1 JAN,JUL ?", "0 0 0 1 DEC-JAN ?", "0 0 0 1 10-3 ?", "0 0 0 1 3-5,9 ?",
        "0 0 0 15 6 ?", "0 0 0 1 12 ?", "0 0 0 30 2 ?", "0 0 0 31 4,6,9,11 ?",
        "0 0 0 31 2,4 ?", "0 0 0 29 2 ? 2100", "0 0 0 29 2 ? 2097-2105",
        // years
        "0 0 0 1 1 ? 2025", "0 0 0 1 1 ? 2025,2027,2030", "0 0 0 * * ? 2025-2026",
        "0 0 0 1 * ? 2026/2", "0 0 0 1 1 ? 1970-1971", "0 0 0 1 1 ? 2099", "0 0 0 1 1 ? 2100",
        "0 0 0 1 1 ? 2500", "0 0 0 1 1 ? */4", "0 0 0 1 1 ? 1970/10", "0 0 12 ? * 6#5 2025-2030",
        "0 0 0 ? * MON 2024,2026", "0 0 0 1 1 ? 1969", "0 0 0 ? * * 2041",
        // case and spacing
        "0 0 0 ? * mon-fri", "0 0 0 l * ?", "0 0 0 lw * ?", "0 0 0 ? * fri#2",
        "0\t0\t0\t*\t*\t?", "  0 0 0 * * ?  ", "0  0   0 * * ?", "0 0 0 * * ?\n",
        // combined
        "15 30 10-12 ? * MON-FRI 2025-2030", "0 0/30 8-10 ? * 2,4", "0 0 0 1 * ?",
        "0 0 6,18 1-10,20-25 * ?", "0 0 0 ? 1,4,7,10 6L", "0 0 0 ? 3-5 2#1",
        "0 45 23 L-1 DEC ?", "59 59 23 L * ?", "0 0 0 31 12 ? 2030-2040/5",
    };

    //  Quartz quirks (accepted although odd; see xxl_cron.c for each).
    static final String[] QUIRKS = {
        "5X * * * * ?", "0 0 0 ?X * MON", "0 0 0 ? * * garbage", "0 0 0 * * ? 2025 more fields",
        "99 * * * * ?", "0 99 * * * ?", "0 0 99 * * ?", "0 0 0 99 * ?", "0 0 0 1 99 ?",
        "0 0 0 ? * 99", "0 0 0 98 * MON", "0 0 0 ? 1 98", "0 0 0 1 JAN-MAR/2 ?",
        "0 0 0 1 JAN/2 ?", "0 0 0 ? * MON-FRI/2", "*/0 * * * * ?", "0 0 0 1-5/0 * ?",
        "*/-5 * * * * ?", "*/+5 * * * * ?", "0 0 0 1-31/32 * ?", "0 0 0 ? * 8#1",
        "0 0 0 ? * 0#2", "0 0 0 0W * ?", "L * * * * ?", "0 L * * * ?", "0 0 L * * ?",
        "0 0 0 1 L ?", "0 0 0 * * ? L", "0 0 0 ? JANUARY *", "0 0 0 ? * MONDAY",
        "0 0 0 ? * L-2", "0 0 0 ? * LW", "0 0 0 ? * MONL", "0 0 0 ? * MON#+2", "0 0 0 ? * 2#+2",
        "0 0 0 ? * MON#02", "*X * * * * ?", "*/5X * * * * ?", "0 0 0 1-5X * ?",
        "99-5 * * * * ?", "99-99/30 * * * * ?", "0 0 99-99/10 * * ?", "0 0 0 98-5 * MON",
        "0 0 0 1,? * MON", "0 0 0 ? * 1-7/8", "0 0 0 ? * *L", "0 0 0 1 2 ? 2025-2025",
        "0 0 0 ? * 1L,2", "0 0 0 1W,15 * ?", "0 0 0 5W-10 * ?", "0 0 0 ? * 6#3-5",
        "0 0 0 ? * SUN-SAT#2", "0 0 0 ? * 2L-5", "0 0 0 ? * 3#5#", "1/0 * * * * ?",
        "0 0 0 1 1/0 ?", "0 0 0 1-5/10 * ?", "0 0 0 1 1 ? 2030/0", "0 0 0 1 1 ? 0",
        "0 0 0 1 1 ? 99", "0 0 0 1 1 ? 1999999999",
    };

    //  Expressions Quartz must reject.
    static final String[] REJECT = {
        "", "0 0 0 * *", "0 0 0 * * *", "0 0 0 ? * ?", "0 0 0 1 * MON", "0 0 0 L * 2",
        "60 * * * * ?", "0 60 * * * ?", "0 0 24 * * ?", "0 0 0 32 * ?", "0 0 0 0 * ?",
        "0 0 0 * 13 ?", "0 0 0 * 0 ?", "0 0 0 ? * 0", "0 0 0 ? * 8", "0 0 0 ? * MON#6",
        "0 0 0 ? * 2#0", "0 0 0 ? * 2#1,3#2", "0 0 0 L,5 * ?", "0 0 0 ? * 5L,1",
        "0 0 0 L-31 * ?", "0 0 0 ? FOO *", "0 0 0 ? * FOO", "0 0 0 32W * ?",
        "0 0 0 ? * 5W", "0/ * * * * ?", "*/ * * * * ?", "0 */61 * * * ?", "0 0 */25 * * ?",
        "0 0 0 */32 * ?", "0 0 0 1 */13 ?", "0 0 0 ? * */8", "5- * * * * ?", "5-X * * * * ?",
        "5/X * * * * ?", "5/1X * * * * ?", "0 0 0 ? * #1", "0 0 0 ? * 1#", "a * * * * ?",
        "abc * * * * ?", "0 0 0 ? * MON-", "0 0 0 ? * MON-FOO", "0 0 0 L-X * ?", "0 0 0 LX * ?",
        "0 0 0 L- * ?", "0 0 0 1 1 ? 2030-2025", "? * * * * ?", "0 0 ? * * ?", "0 0 0 * ? *",
        "0 0 0 ? * 1#2x", "0 0 0 1 1 ? 99999999999", "0 0 0 99999999999 * ?", "0 0 0 1 JA ?",
        "0 0 0 ? * MO", "0 0 0 ? * MON-FR", "0 0 0 ??? * MON", "0 0 0 ?? * MON", "0 0 0 1L * ?",
        "0 0 0 ? * 8L", "0 0 0 ? * 0L", "1W * * * * ?", "0 0 0 1 1#2 ?", "0 0 0 * 1-", "-1 * * * * ?",
        "0 0 0 1 1 ? -2025", "0 0 0 1 1 ? 2025-", "0 0 0 1 1 ? A", "0 0 0 1 1 ? *W", "60-61 * * * * ?",
        "0 0 0 1-32 * ?", "0 0 0 ? * 1-8", "0 0 0 1 1-13 ?", "0 0 0 ? * 3#", "0 0 0 ? * L-", "0 0 0 1 1 ? 20x",
        "0 0 0 1 1 ?,", "  ", "0", "0 0 0 ? * MON#6", "0 0 0 ? * MON#0", "0 0 0 ? * MON#x",
        "0 0 0 33W * ?", "0 0 0 L-3X * ?", "0 0 0 ? JAN-XYZ *", "0 0 0 ? XYZ-JAN *",
    };

    //  Daylight-saving focused expressions: DST zones with starts around their
    //  transitions, plus Asia/Shanghai around its 1986-1991 transitions.
    static final String[] DST = {
        "0 30 2 * * ?", "0 30 1 * * ?", "0 0 2 * * ?", "0 0 1 * * ?", "0 0 3 * * ?",
        "0 */30 * * * ?", "0 0 * * * ?", "0 15 1,2,3 * * ?", "0 0/20 0-4 * * ?",
        "0 0 2 ? 3 SUN", "0 0 1-3 ? * SUN", "0 30 2 L * ?", "0 30 2 ? * 1L",
        "0 30 2 8-14 3 ?", "0 0/15 1-3 * * ?", "0 45 1 * * ?", "0 15 2 * * ?",
        "0 0 0 * * ?", "* * * * * ?", "0 * * * * ?", "0 */10 * * * ?", "30 59 1 * * ?",
        "0 59 0 * * ?", "0 0 4 * * ?", "0 30 2 15W * ?", "0 30 2 LW * ?", "0 30 2 ? * 1#1",
        "0 30 2 ? * 1#2", "0 30 1 ? * 1#1", "0 30 1 ? * 1L", "0 0 2-3 * * ?", "0 1 2 * * ?",
        "0 0/5 1 * * ?", "0 0/5 2 * * ?", "59 59 1 * * ?", "0 0 22-4 * * ?", "0 30 0-6/2 * * ?",
        "0 15,45 * * * ?", "0 0 1 1W * ?", "0 30 2 5W * ?", "0 0 2 L-3 * ?",
    };

    //  Pseudo-random expressions from a small grammar (valid and invalid).
    static Random rnd = new Random(20240611L);
    static int ri(int lo, int hi) { return lo + rnd.nextInt(hi - lo + 1); }
    static String pick(String... v) { return v[rnd.nextInt(v.length)]; }
    static final String[] MON = {"JAN","FEB","MAR","APR","MAY","JUN","JUL","AUG","SEP","OCT","NOV","DEC"};
    static final String[] DAY = {"SUN","MON","TUE","WED","THU","FRI","SAT"};

    static String numFrag(int lo, int hi) {
        int slack = rnd.nextInt(20) == 0 ? 1 : 0;
        int a = ri(lo - slack, hi + slack), b = ri(lo - slack, hi + slack), i = ri(1, hi / 2 + 1 + slack);
        switch (rnd.nextInt(9)) {
            case 0: return "*";
            case 1: case 2: return "" + a;
            case 3: return a + "-" + b;
            case 4: return a + "/" + i;
            case 5: return a + "-" + b + "/" + i;
            case 6: return "*/" + i;
            case 7: return Math.min(a, b) + "-" + Math.max(a, b);
            default: return "" + a;
        }
    }
    static String field(int lo, int hi) {
        int n = rnd.nextInt(6) == 0 ? ri(2, 3) : 1;
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < n; k++) { if (k > 0) b.append(','); b.append(numFrag(lo, hi)); }
        return b.toString();
    }
    static String randomExpr() {
        String sec = rnd.nextInt(3) == 0 ? "0" : field(0, 59);
        String min = rnd.nextInt(3) == 0 ? "0" : field(0, 59);
        String hr = field(0, 23);
        String mon = rnd.nextInt(3) == 0 ? "*" : (rnd.nextInt(4) == 0
            ? (rnd.nextBoolean() ? pick(MON) : pick(MON) + "-" + pick(MON)) : field(1, 12));
        String dom, dow;
        if (rnd.nextBoolean()) {
            dow = rnd.nextInt(30) == 0 ? "*" : "?";
            switch (rnd.nextInt(6)) {
                case 0: dom = "L" + (rnd.nextBoolean() ? "-" + ri(0, 31) : "") + (rnd.nextBoolean() ? "W" : ""); break;
                case 1: dom = ri(0, 32) + "W"; break;
                case 2: dom = "LW"; break;
                default: dom = field(1, 31);
            }
        } else {
            dom = rnd.nextInt(30) == 0 ? "*" : "?";
            switch (rnd.nextInt(7)) {
                case 0: dow = ri(0, 8) + "L"; break;
                case 1: dow = ri(1, 7) + "#" + ri(0, 6); break;
                case 2: dow = pick(DAY) + (rnd.nextBoolean() ? "-" + pick(DAY) : ""); break;
                case 3: dow = pick(DAY) + "#" + ri(1, 5); break;
                default: dow = field(1, 7);
            }
        }
        String yr = "";
        switch (rnd.nextInt(6)) {
            case 0: yr = " *"; break;
            case 1: yr = " " + ri(2020, 2045); break;
            case 2: yr = " " + ri(2020, 2030) + "-" + ri(2025, 2050); break;
            case 3: yr = " " + ri(2020, 2030) + "/" + ri(1, 5); break;
            default: break;
        }
        return sec + " " + min + " " + hr + " " + dom + " " + mon + " " + dow + yr;
    }

    //  Parser fuzz: a well-formed expression with one field replaced by
    //  random characters from the cron alphabet, or with odd separators.
    static final String ALPHABET = "0123456789012345*/-,?LW#L-/,*JFMASONDTWHRUEBYX ";
    static String mutate(String e) {
        String[] f = e.trim().split(" ");
        int k = rnd.nextInt(f.length);
        StringBuilder b = new StringBuilder();
        int n = ri(1, 7);
        for (int i = 0; i < n; i++) b.append(ALPHABET.charAt(rnd.nextInt(ALPHABET.length())));
        String r = b.toString().trim();
        if (r.isEmpty()) r = "5";
        if (rnd.nextInt(3) == 0) r = f[k] + r;  // trailing garbage after a valid value
        f[k] = r;
        String sep = rnd.nextInt(10) == 0 ? "\t" : " ";
        return String.join(sep, f);
    }

    //  --all-zones: instead of the fixture, the same format for every zone
    //  that both Java and /usr/share/zoneinfo know, around its transitions
    //  in 1995, 2025 and 2045 (large; for one-off checks of the time zone
    //  code: java ... --all-zones > /tmp/z.txt; test_cron /tmp/z.txt).
    static void allZones() {
        String[] exprs = {"0 0 * * * ?", "0 30 2 * * ?", "0 */20 0-3 ? * *", "0 0 0 ? * 1L"};
        for (String z : new TreeSet<>(ZoneId.getAvailableZoneIds())) {
            if (!java.nio.file.Files.isRegularFile(java.nio.file.Paths.get("/usr/share/zoneinfo", z)))
                continue;
            List<Long> st = new ArrayList<>();
            st.add(ms("2024-01-01T00:00:00Z"));
            ZoneRules rules = ZoneId.of(z).getRules();
            for (int y : new int[] {1995, 2025, 2045}) {
                Instant t = Instant.parse(y + "-01-01T00:00:00Z");
                for (int k = 0; k < 2; k++) {
                    ZoneOffsetTransition tr = rules.nextTransition(t);
                    if (tr == null || tr.getInstant().getEpochSecond() > t.getEpochSecond() + 366L * 86400) break;
                    st.add(tr.getInstant().toEpochMilli() - 7200000L);
                    t = tr.getInstant();
                }
            }
            for (String e : exprs) run(e, new String[] {z}, st);
        }
        System.out.print(out);
        System.out.flush();
        System.exit(0);
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("--all-zones"))
            allZones();
        String jar;
        try {
            jar = java.nio.file.Paths.get(CronExpression.class.getProtectionDomain()
                .getCodeSource().getLocation().toURI()).toRealPath().getFileName().toString();
        } catch (Exception e) {
            jar = "?";
        }
        out.append("# Generated by tests/cron/QuartzFixture.java with ").append(jar)
           .append(" on Java ").append(System.getProperty("java.version")).append(". Do not edit.\n");
        out.append("# Format: see QuartzFixture.java. Records: E expr zone / R reason / N start times.\n");
        String[] gz = {"UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Shanghai"};
        for (String e : GENERAL) run(e, gz, common());
        for (String e : QUIRKS) run(e, new String[] {"UTC", "America/New_York"}, common());
        for (String e : REJECT) run(e, new String[] {"UTC"}, common());
        for (String e : DST) {
            for (String z : DST_ZONES) {
                List<Long> st = dstStarts(z, 2025, 2026, 2041);
                run(e, new String[] {z}, st);
            }
            run(e, new String[] {"Asia/Shanghai"}, dstStarts("Asia/Shanghai", 1986, 1990));
        }
        for (int k = 0; k < 500; k++) {
            String e = randomExpr();
            long s1 = ms("2000-01-01T00:00:00Z") + (long) (rnd.nextDouble() * 1.9e12);
            long s2 = ms("2000-01-01T00:00:00Z") + (long) (rnd.nextDouble() * 1.9e12);
            s1 -= s1 % 1000;  // whole seconds: Quartz's W check is clock-dependent otherwise
            run(e, new String[] {pick(ALL_ZONES)}, list(s1, s2 - s2 % 1000));
        }
        for (int k = 0; k < 1500; k++) {
            String e = mutate(randomExpr());
            long s1 = ms("2000-01-01T00:00:00Z") + (long) (rnd.nextDouble() * 1.9e12);
            run(e, new String[] {"UTC"}, list(s1 - s1 % 1000));
        }
        out.append("# ").append(exprs).append(" expression runs, ").append(cases).append(" cases\n");
        System.out.print(out);
        System.out.flush();
        System.exit(0);  // a hung daemon worker must not keep the JVM alive
    }
}
