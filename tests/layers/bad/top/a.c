/* top/a.c: the top layer; calls down */
int low_b (int n);

int
top_run (int n)
{
    return low_b (n);
}
