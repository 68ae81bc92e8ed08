/*  xxl_secret.h -- the HTTP side's secrets: passwords, tokens, session ids.

    Passwords are stored as crypt(3) hashes (libcrypt's yescrypt, "$y$");
    a bearer token or session id is 32 random bytes from the OS written as
    64 hex digits and stored only as its SHA-256 (hex).  Comparisons of
    secrets run in constant time for a given length.  Thread-safe (crypt_rn
    with the caller's own crypt_data); yescrypt takes tens of milliseconds
    by design: call it off the engine's hot path where there is a choice.
*/

#ifndef XXL_SECRET_H_INCLUDED
#define XXL_SECRET_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#define XXL_SECRET_HEX 65               //  64 hex digits and NUL

//  A new crypt(3) hash of password (caller frees), or NULL.  A password of
//  512 bytes or more (libcrypt's limit) is hashed as "sha256:" and its
//  SHA-256 in hex; xxl_secret_check_password does the same
char *xxl_secret_hash_password (const char *password);
//  Whether password matches hash; a NULL or empty hash matches nothing, in
//  the time a real one takes (no user is told apart from a wrong password)
bool xxl_secret_check_password (const char *password, const char *hash);
//  32 random bytes from the OS as hex; 0, or -1 when the OS has none
int xxl_secret_random (char out [XXL_SECRET_HEX]);
//  The characters of a password xxl_secret_password makes: no two that
//  look alike in common fonts (0/O/o, 1/l/I/i), none a shell or JSON
//  quotes: 55, 5.78 bits each
#define XXL_SECRET_PASSWORD_CHARS "23456789abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
//  A password of len characters of XXL_SECRET_PASSWORD_CHARS, each drawn
//  evenly from the OS's random bytes (getrandom), into out (len + 1
//  bytes); 0, or -1 when the OS has none
int xxl_secret_password (char *out, size_t len);
//  The SHA-256 of text, as hex
void xxl_secret_sha256 (const char *text, char out [XXL_SECRET_HEX]);
//  Whether a and b are equal, in time that depends only on their lengths
bool xxl_secret_equal (const char *a, const char *b);

#endif
