/*  test_mysqldump.c -- the mysqldump reader (sdk/ctl/xxl_mysqldump.h):
    every form of value and statement mysqldump writes, column lists,
    bounds and errors with their line numbers, and a dump larger than the
    reader's buffer.
*/

#include "xxl_test.h"
#include "xxl_mysqldump.h"

static const char *const s_tables [] = { "t", "u", NULL };

//  Reads text; the rows as "table:col=value|col=value;..." (strings as
//  they are, NULL as ~, numbers as #N, calls as @x); the error after '!'
static char *
s_read (const char *text, size_t size)
{
    FILE *file = fmemopen ((void *) text, size, "r");
    xxl_dump_t *dump = xxl_dump_new (file, s_tables);
    size_t cap = 1 << 20, used = 0;
    char *out = calloc (1, cap);
    const xxl_dump_row_t *row;
    int rc;
    while ((rc = xxl_dump_next (dump, &row)) == 1) {
        used += snprintf (out + used, cap - used, "%s:", row->table);
        for (size_t i = 0; i < row->count; i++) {
            const xxl_dump_value_t *v = &row->values [i];
            used += snprintf (out + used, cap - used, "%s%s=%s", i? "|": "", row->columns [i],
                              v->type == XXL_DUMP_NULL? "~": v->type == XXL_DUMP_NUMBER? "#"
                              : v->type == XXL_DUMP_EXPR? "@": "");
            if (used + v->size + 4 < cap) {
                memcpy (out + used, v->data, v->size);
                used += v->size;
            }
        }
        used += snprintf (out + used, cap - used, ";");
    }
    if (rc < 0)
        snprintf (out + used, cap - used, "!%s", xxl_dump_error (dump));
    XXL_CHECK (xxl_dump_next (dump, &row) == rc);     //  stays at its end or error
    xxl_dump_destroy (&dump);
    fclose (file);
    return out;
}

static void
s_check (const char *text, const char *want)
{
    char *got = s_read (text, strlen (text));
    XXL_CHECK_STR (got, want);
    free (got);
}

int
main (void)
{
    //  A mysqldump's header, comments, CREATE TABLE, LOCK, multi-row INSERT
    s_check ("-- MySQL dump 10.13  Distrib 8.0.36\r\n"
             "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\r\n"
             "DROP TABLE IF EXISTS `t`;\r\n"
             "/*!40101 SET @saved_cs_client     = @@character_set_client */;\r\n"
             "CREATE TABLE `t` (\r\n"
             "  `id` int NOT NULL AUTO_INCREMENT,\r\n"
             "  `name` varchar(255) NOT NULL DEFAULT 'a,b' COMMENT 'x(y',\r\n"
             "  `n` decimal(10,2) DEFAULT NULL,\r\n"
             "  PRIMARY KEY (`id`),\r\n"
             "  UNIQUE KEY `i_name` (`name`) USING BTREE\r\n"
             ") ENGINE=InnoDB AUTO_INCREMENT=3 DEFAULT CHARSET=utf8mb4;\r\n"
             "LOCK TABLES `t` WRITE;\r\n"
             "/*!40000 ALTER TABLE `t` DISABLE KEYS */;\r\n"
             "INSERT INTO `t` VALUES (1,'a',1.50),(2,'b',NULL);\r\n"
             "UNLOCK TABLES;\r\n",
             "t:id=#1|name=a|n=#1.50;t:id=#2|name=b|n=~;");
    //  Escapes, doubling, UTF-8 byte-exact, introducers, hex and bits
    s_check ("CREATE TABLE t (a text);\n"
             "INSERT INTO t VALUES ('\\'\\\"\\b\\n\\r\\t\\Z\\\\\\%\\_'''),('示例任务01'),"
             "(\"d\"\"q\"),(_binary 'bin'),(_utf8mb4'x'),(X'414243'),(0x4a4B),(b'1000001');",
             "t:a='\"\b\n\r\t\032\\\\%\\_';t:a=示例任务01;t:a=d\"q;t:a=bin;t:a=x;t:a=ABC;"
             "t:a=JK;t:a=A;");
    {
        //  \0: a NUL inside the value
        const char text [] = "CREATE TABLE t (a text); INSERT INTO t VALUES ('x\\0y');";
        FILE *file = fmemopen ((void *) text, sizeof text - 1, "r");
        xxl_dump_t *dump = xxl_dump_new (file, s_tables);
        const xxl_dump_row_t *row;
        XXL_CHECK_INT (xxl_dump_next (dump, &row), 1);
        XXL_CHECK_INT (row->values [0].size, 3);
        XXL_CHECK (memcmp (row->values [0].data, "x\0y", 3) == 0);
        XXL_CHECK_INT (xxl_dump_next (dump, &row), 0);
        xxl_dump_destroy (&dump);
        fclose (file);
    }
    //  --complete-insert column lists, db.table, IGNORE, calls, other tables
    s_check ("USE `xxl_job`;\nINSERT IGNORE INTO `xxl_job`.`t`(`b`, `a`) VALUES (now(), -2e3);\n"
             "INSERT INTO `other` VALUES ('skipped;'),('x');\n"
             "INSERT INTO u (x) VALUE (TRUE), (FALSE) ; # trailing\n"
             "START TRANSACTION; commit;",
             "t:b=@now()|a=#-2e3;u:x=#1;u:x=#0;");
    //  The last CREATE of a table names its columns; DELIMITER lines
    s_check ("CREATE TABLE IF NOT EXISTS t (a int, b int);\nCREATE TABLE t (`c` int);\n"
             "DELIMITER ;;\nCREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW BEGIN SET @a=1; END ;;\n"
             "DELIMITER ;\nINSERT INTO t VALUES (7);",
             "t:c=#7;");
    //  Errors name their line; nothing past them
    s_check ("CREATE TABLE t (a int);\n\nINSERT INTO t VALUES (1,2);",
             "!line 3: a row of 2 values for 1 columns of t");
    s_check ("INSERT INTO t VALUES (1);", "!line 1: INSERT INTO t without a column list and"
             " no CREATE TABLE t before it");
    s_check ("CREATE TABLE t (a text);\nINSERT INTO t VALUES ('ok'),\n('never ends);",
             "t:a=ok;!line 3: a quoted text (') that never ends");
    s_check ("CREATE TABLE t (a int);\n/* open", "!line 2: a comment /* that never ends");
    s_check ("CREATE TABLE t (a int);\nINSERT INTO t VALUES (1) (2);",
             "!line 2: ',' or ';' expected after a row of INSERT INTO t");
    s_check ("CREATE TABLE t (a int);\nINSERT INTO t VALUES (=);",
             "!line 2: a value expected");
    s_check ("CREATE TABLE t (a int);\nINSERT INTO t VALUES (X'4');",
             "!line 2: a hex literal with an odd number of digits");
    s_check ("CREATE TABLE t (a int);\nINSERT INTO t SELECT 1;",
             "!line 2: INSERT INTO t: VALUES expected (INSERT ... SELECT or SET is not a dump's)");
    s_check ("\x01", "!line 1: a statement expected, not byte 0x01");
    s_check ("", "");
    s_check ("-- only a comment", "");
    //  Bounds: too many values in a row; a value too long
    {
        size_t size = 20 + 2 * (XXL_DUMP_MAX_COLS + 1);
        char *text = malloc (size + 40);
        size_t used = sprintf (text, "INSERT INTO u (x) VALUES (");
        for (int i = 0; i <= XXL_DUMP_MAX_COLS; i++)
            used += sprintf (text + used, "%s1", i? ",": "");
        strcpy (text + used, ");");
        char *got = s_read (text, strlen (text));
        XXL_CHECK_HAS (got, "a row of more than 256 values");
        free (got);
        free (text);
    }
    {
        size_t size = XXL_DUMP_MAX_VALUE + 100;
        char *text = malloc (size);
        size_t used = sprintf (text, "CREATE TABLE t (a text); INSERT INTO t VALUES ('");
        memset (text + used, 'x', XXL_DUMP_MAX_VALUE + 1);
        used += XXL_DUMP_MAX_VALUE + 1;
        strcpy (text + used, "');");
        char *got = s_read (text, strlen (text));
        XXL_CHECK_HAS (got, "!line 1: a value longer than 16777216 bytes");
        free (got);
        //  The same long text in a table not wanted is only scanned
        used = sprintf (text, "INSERT INTO other VALUES ('");
        memset (text + used, 'x', XXL_DUMP_MAX_VALUE + 1);
        used += XXL_DUMP_MAX_VALUE + 1;
        strcpy (text + used, "'); CREATE TABLE t (a int); INSERT INTO t VALUES (5);");
        got = s_read (text, strlen (text));
        XXL_CHECK_STR (got, "t:a=#5;");
        free (got);
        free (text);
    }
    //  Many rows over many buffer refills, a value across a refill
    {
        size_t cap = 4 << 20, used = 0;
        char *text = malloc (cap);
        used += sprintf (text, "CREATE TABLE t (a int, b text);\nINSERT INTO t VALUES ");
        for (int i = 0; i < 50000; i++)
            used += sprintf (text + used, "%s(%d,'行%d\\n')", i? ",\n": "", i, i);
        used += sprintf (text + used, ";\n");
        FILE *file = fmemopen (text, used, "r");
        xxl_dump_t *dump = xxl_dump_new (file, s_tables);
        const xxl_dump_row_t *row;
        int rows = 0, ok = 1;
        while (xxl_dump_next (dump, &row) == 1) {
            char want [64];
            snprintf (want, sizeof want, "行%d\n", rows);
            ok = ok && atoi (row->values [0].data) == rows && strcmp (row->values [1].data, want) == 0
                 && row->line == (size_t) rows + 2;
            rows++;
        }
        XXL_CHECK_INT (rows, 50000);
        XXL_CHECK (ok);
        XXL_CHECK_STR (xxl_dump_error (dump), "");
        xxl_dump_destroy (&dump);
        fclose (file);
        free (text);
    }
    return xxl_test_done ();
}
