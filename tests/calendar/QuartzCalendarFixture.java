//  QuartzCalendarFixture: generates tests/calendar/fixture.txt, the
//  reference data that tests/test_calendar_class.c checks the calendar
//  class (sdk/src/xxl_calendar.c) against.  It runs the real Quartz 2.3:
//  a CronTriggerImpl with a HolidayCalendar, a CronCalendar, or a
//  CronCalendar over a HolidayCalendar (both at once), in several time
//  zones (the trigger's and the calendar's, alike or not), from instants
//  around daylight-saving transitions and others, and prints the next 20
//  fire times (TriggerUtils.computeFireTimes).
//
//  Run:  java -cp /usr/share/java/quartz2.jar tests/calendar/QuartzCalendarFixture.java \
//            > tests/calendar/fixture.txt
//
//  Output format (one record per line, fields separated by TAB):
//    E <expr> <zone>                 the trigger's cron expression and zone
//    C <zone> <dates> <cron>         the calendar: its zone, its dates
//                                    (YYYY-MM-DD comma-separated, "-" none)
//                                    and its CronCalendar expression ("-" none)
//    N <start_ms> <times>            the fire times strictly after start_ms,
//                                    in epoch ms separated by spaces, up to
//                                    20; "END" follows when there were fewer
//  The output does not depend on the day it is generated: every case
//  ends well before Quartz's year limit.

import org.quartz.CronExpression;
import org.quartz.TriggerUtils;
import org.quartz.impl.calendar.BaseCalendar;
import org.quartz.impl.calendar.CronCalendar;
import org.quartz.impl.calendar.HolidayCalendar;
import org.quartz.impl.triggers.CronTriggerImpl;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.*;

public class QuartzCalendarFixture {
    static final StringBuilder out = new StringBuilder();
    static int cases = 0;
    static final int TIMES = 20;

    static long ms(String iso) { return Instant.parse(iso).toEpochMilli(); }

    //  The years whose transitions a zone is tested around (Asia/Shanghai
    //  has had none since 1991)
    static int[] years(String zone) {
        return zone.equals("Asia/Shanghai") ? new int[] {1990, 1991} : new int[] {2025, 2026};
    }

    static List<ZoneOffsetTransition> transitions(String zone) {
        List<ZoneOffsetTransition> r = new ArrayList<>();
        ZoneRules rules = ZoneId.of(zone).getRules();
        for (int y : years(zone)) {
            Instant t = Instant.parse(y + "-01-01T00:00:00Z");
            for (int k = 0; k < 2; k++) {
                ZoneOffsetTransition tr = rules.nextTransition(t);
                if (tr == null || tr.getInstant().isAfter(Instant.parse((y + 1) + "-01-01T00:00:00Z")))
                    break;
                r.add(tr);
                t = tr.getInstant();
            }
        }
        return r;
    }

    //  Starts: two fixed instants, and 2 h and 10 min before each
    //  transition of the zone
    static List<Long> starts(String zone) {
        List<Long> r = new ArrayList<>();
        int y = years(zone)[0];
        r.add(ms(y + "-01-01T00:00:00Z"));
        r.add(ms(y + "-06-15T08:30:00Z"));
        for (ZoneOffsetTransition tr : transitions(zone)) {
            long m = tr.getInstant().toEpochMilli();
            r.add(m - 7200000L);
            r.add(m - 600000L);
        }
        return r;
    }

    //  Holidays: the local dates of the zone's transitions and the day
    //  after each, and New Year's and Christmas days
    static String dstDates(String zone) {
        TreeSet<String> d = new TreeSet<>();
        ZoneId id = ZoneId.of(zone);
        for (ZoneOffsetTransition tr : transitions(zone)) {
            LocalDate day = tr.getInstant().atZone(id).toLocalDate();
            d.add(day.toString());
            d.add(day.plusDays(1).toString());
        }
        for (int y : years(zone)) {
            d.add(y + "-01-01");
            d.add(y + "-12-25");
            d.add(y + "-12-26");
        }
        return String.join(",", d);
    }

    //  Sixty seeded dates over the zone's two years
    static Random rnd = new Random(20261129L);
    static String randomDates(String zone) {
        TreeSet<String> d = new TreeSet<>();
        LocalDate first = LocalDate.of(years(zone)[0], 1, 1);
        while (d.size() < 60)
            d.add(first.plusDays(rnd.nextInt(730)).toString());
        return String.join(",", d);
    }

    static org.quartz.Calendar calendar(String zone, String dates, String cron) throws Exception {
        TimeZone tz = TimeZone.getTimeZone(zone);
        HolidayCalendar holidays = null;
        if (!dates.equals("-")) {
            holidays = new HolidayCalendar(tz);
            for (String s : dates.split(",")) {
                LocalDate day = LocalDate.parse(s);
                java.util.Calendar c = java.util.Calendar.getInstance(tz);
                c.clear();
                c.set(day.getYear(), day.getMonthValue() - 1, day.getDayOfMonth(), 12, 0, 0);
                holidays.addExcludedDate(c.getTime());
            }
        }
        if (cron.equals("-"))
            return holidays;
        return holidays == null ? new CronCalendar(null, cron, tz) : new CronCalendar(holidays, cron, tz);
    }

    static void run(String expr, String zone, String calZone, String dates, String cron,
                    List<Long> starts) throws Exception {
        out.append("E\t").append(expr).append('\t').append(zone).append('\n');
        out.append("C\t").append(calZone).append('\t').append(dates).append('\t').append(cron).append('\n');
        org.quartz.Calendar cal = calendar(calZone, dates, cron);
        for (long s : starts) {
            cases++;
            CronTriggerImpl t = new CronTriggerImpl();
            t.setName("t");
            CronExpression ce = new CronExpression(expr);
            ce.setTimeZone(TimeZone.getTimeZone(zone));
            t.setCronExpression(ce);
            t.setTimeZone(TimeZone.getTimeZone(zone));
            t.setStartTime(new Date(s + 1000));     //  first fire: strictly after s
            List<Date> times = TriggerUtils.computeFireTimes(t, cal, TIMES);
            out.append("N\t").append(s).append('\t');
            for (int i = 0; i < times.size(); i++) {
                if (i > 0) out.append(' ');
                out.append(times.get(i).getTime());
            }
            if (times.size() < TIMES) out.append(times.isEmpty() ? "END" : " END");
            out.append('\n');
        }
    }

    //  Each calendar with the trigger expressions it is tested with (none
    //  that it excludes forever: Quartz would search to its year limit)
    static final String[][] CRON_CALENDARS = {
        {"* * 0-7 * * ?", "0 0 * * * ?", "0 */20 * * * ?", "0 0 6-9 * * ?"},
        {"* * * ? * SAT,SUN", "0 0 12 * * ?", "0 0 * * * ?", "0 30 2 ? * SUN,MON", "0 0 0 1 * ?"},
        {"* 0-30 2 * * ?", "0 */10 * * * ?", "0 0/15 1-3 * * ?", "0 45 1 * * ?", "0 31 2 * * ?"},
        {"*/2 * * * * ?", "*/5 * * * * ?", "*/3 * * * * ?"},
        {"0 0 * * * ?", "0 */30 * * * ?", "0 0/20 * * * ?"},
        {"* * 9-17 ? * MON-FRI", "0 0 * * * ?", "0 0 12 * * ?", "0 30 8-18 * * ?"},
    };
    static final String[] DST_HOLIDAY_EXPRS = {"0 0 * * * ?", "0 30 2 * * ?", "0 0 0 * * ?", "0 15 10 ? * MON-FRI"};
    static final String[] RANDOM_HOLIDAY_EXPRS = {"0 0 12 * * ?", "0 0 */6 * * ?", "0 0 0 L * ?", "0 30 1,2,3 * * ?"};
    static final String[] BOTH_EXPRS = {"0 0 12 * * ?", "0 0 * * * ?", "0 30 2 * * ?"};

    public static void main(String[] args) throws Exception {
        String jar;
        try {
            jar = java.nio.file.Paths.get(CronExpression.class.getProtectionDomain()
                .getCodeSource().getLocation().toURI()).toRealPath().getFileName().toString();
        } catch (Exception e) {
            jar = "?";
        }
        out.append("# Generated by tests/calendar/QuartzCalendarFixture.java with ").append(jar)
           .append(" on Java ").append(System.getProperty("java.version")).append(". Do not edit.\n");
        out.append("# Format: see QuartzCalendarFixture.java. Records: E expr zone / C zone dates cron / N start times.\n");
        //  {trigger zone, calendar zone}
        String[][] pairs = {
            {"Europe/Berlin", "Europe/Berlin"}, {"America/New_York", "America/New_York"},
            {"Asia/Shanghai", "Asia/Shanghai"}, {"Australia/Lord_Howe", "Australia/Lord_Howe"},
            {"UTC", "UTC"}, {"UTC", "Australia/Lord_Howe"}, {"Europe/Berlin", "America/New_York"},
        };
        for (String[] p : pairs) {
            String zone = p[0], calZone = p[1];
            List<Long> st = starts(calZone);
            String dst = dstDates(calZone);
            for (String e : DST_HOLIDAY_EXPRS) run(e, zone, calZone, dst, "-", st);
            String random = randomDates(calZone);
            for (String e : RANDOM_HOLIDAY_EXPRS) run(e, zone, calZone, random, "-", st);
            for (String[] c : CRON_CALENDARS)
                for (int i = 1; i < c.length; i++) run(c[i], zone, calZone, "-", c[0], st);
            for (String e : BOTH_EXPRS) run(e, zone, calZone, dst, "* * * ? * SAT,SUN", st);
        }
        out.append("# ").append(cases).append(" cases\n");
        System.out.print(out);
        System.out.flush();
    }
}
