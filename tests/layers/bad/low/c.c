/* low/c.c */
int low_d (int n);

int
low_c (int n)
{
    return low_d (n + 1);
}
