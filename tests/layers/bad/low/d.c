/* low/d.c: closes the ring (d -> b), and is over max-ring's 20 lines */
int low_b (int n);

int
low_d (int n)
{
    int sum = 0;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    sum += n;
    if (sum > 100)
        return low_b (sum - 100);
    return sum;
}
