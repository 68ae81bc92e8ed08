/* top/a.c: calls down (low_b, and low_twice of low/b.h) and across, one
   way (side_help) */
#include "../low/b.h"
int low_b (int n);
int side_help (int n);

int top_count = 0;

int
top_run (int n)
{
    top_count++;
    return low_b (side_help (low_twice (n)));
}
