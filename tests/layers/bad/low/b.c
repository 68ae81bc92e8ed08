/* low/b.c: calls up (top_run), and into a ring b -> c -> d -> b */
int top_run (int n);
int low_c (int n);

int
low_b (int n)
{
    if (n > 10)
        return top_run (n - 1);      /* the upward call */
    return low_c (n);
}
