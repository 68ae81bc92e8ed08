/* side/s.c: the top layer too; called by top, calls down */
int low_c (int n);

int
side_help (int n)
{
    return low_c (n);
}
