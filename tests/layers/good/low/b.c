/* low/b.c: names top_run and top_count where they are no call: in this
   comment, top_run (1); in a string; as a member; as a static function
   and a parameter of its own.  A ring of two (b <-> c): max-ring 2. */
struct s { int top_count; };
int low_c (int n);

static int
top_run (int top_count)
{
    struct s v = { .top_count = top_count };
    const char *why = "top_run (top_count)";
    return why[0] + v.top_count;
}

int
low_b (int n)
{
    return n > 10 ? low_c (n - 1) : top_run (n);
}
