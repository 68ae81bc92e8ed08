/* low/c.c: the other half of the ring b <-> c; 'top_run' */
int low_b (int n);

int
low_c (int n)
{
    char c = '"';
    (void) c;
    return n > 5 ? low_b (n - 1) : n;
}
