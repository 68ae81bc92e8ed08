/* low/b.h: an inline function counts as low/b.c's */
static inline int
low_twice (int n)
{
    return 2 * n;
}
