/*  xxl_openssl.h -- a thread's OpenSSL state, freed before the thread ends.

    libpq (a TCP connection to PostgreSQL that may use TLS) and libcurl
    (the alarm plugins' webhooks and mail) start OpenSSL in the threads
    that use them.  OpenSSL frees a thread's state in a thread-exit
    destructor; run while other threads were ending too, that destructor
    went with a SIGSEGV in mimalloc's thread-exit cleanup at about 1 stop
    in 15.  A thread that may have used OpenSSL calls
    xxl_openssl_thread_stop as its last step instead.  OPENSSL_thread_stop
    is looked up, not linked: a build whose libraries use no OpenSSL has
    none, and then this does nothing.
*/

#ifndef XXL_OPENSSL_H_INCLUDED
#define XXL_OPENSSL_H_INCLUDED

#include <dlfcn.h>

static inline void
xxl_openssl_thread_stop (void)
{
    void (*stop) (void) = (void (*) (void)) dlsym (RTLD_DEFAULT, "OPENSSL_thread_stop");
    if (stop)
        stop ();
}

#endif
