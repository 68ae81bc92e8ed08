/*  xxl_secret.c -- passwords (crypt(3)), random tokens, SHA-256, constant-
    time comparison.  See xxl_secret.h.
*/

#include "xxl_secret.h"

#include <crypt.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <sha2.h>

//  The passphrase crypt(3) gets for password, into buf: the password
//  itself, or for one libcrypt refuses as too long (CRYPT_MAX_PASSPHRASE_SIZE
//  bytes with its NUL: 512; passwords may be 1024 bytes) "sha256:" and the
//  hex SHA-256 of it, so a long password is hashed in full, not refused
static const char *
s_passphrase (const char *password, char buf [8 + XXL_SECRET_HEX])
{
    if (strlen (password) < CRYPT_MAX_PASSPHRASE_SIZE)
        return password;
    char hex [XXL_SECRET_HEX];
    xxl_secret_sha256 (password, hex);
    snprintf (buf, 8 + XXL_SECRET_HEX, "sha256:%s", hex);
    explicit_bzero (hex, sizeof hex);
    return buf;
}

char *
xxl_secret_hash_password (const char *password)
{
    char buf [8 + XXL_SECRET_HEX];
    password = s_passphrase (password, buf);
    //  (yescrypt at libcrypt's default cost, salt from the OS)
    char *setting = crypt_gensalt_ra ("$y$", 0, NULL, 0);
    if (!setting)
        return NULL;
    struct crypt_data *data = (struct crypt_data *) calloc (1, sizeof *data);
    char *hash = NULL;
    if (data) {
        const char *out = crypt_rn (password, setting, data, (int) sizeof *data);
        if (out && out [0] != '*')
            hash = strdup (out);
        explicit_bzero (data, sizeof *data);
        free (data);
    }
    explicit_bzero (buf, sizeof buf);
    free (setting);
    return hash;
}

bool
xxl_secret_check_password (const char *password, const char *hash)
{
    //  A hash of nothing still costs a hash: the time tells no one whether
    //  the user exists
    char buf [8 + XXL_SECRET_HEX];
    password = s_passphrase (password, buf);
    bool real = hash && *hash;
    char *setting = real? NULL: crypt_gensalt_ra ("$y$", 0, NULL, 0);
    struct crypt_data *data = (struct crypt_data *) calloc (1, sizeof *data);
    bool match = false;
    if (data && (real || setting)) {
        const char *out = crypt_rn (password, real? hash: setting, data, (int) sizeof *data);
        match = real && out && out [0] != '*' && xxl_secret_equal (out, hash);
    }
    //  (libcrypt's working memory holds the phrase and what it derived)
    if (data)
        explicit_bzero (data, sizeof *data);
    explicit_bzero (buf, sizeof buf);
    free (data);
    free (setting);
    return match;
}

//  size random bytes from the OS into bytes; 0, or -1
static int
s_random (unsigned char *bytes, size_t size)
{
    size_t got = 0;
    while (got < size) {
        ssize_t rc = getrandom (bytes + got, size - got, 0);
        if (rc < 0 && errno != EINTR)
            return -1;
        got += rc > 0? (size_t) rc: 0;
    }
    return 0;
}

int
xxl_secret_random (char out [XXL_SECRET_HEX])
{
    unsigned char bytes [32];
    if (s_random (bytes, sizeof bytes))
        return -1;
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf (out + 2 * i, 3, "%02x", bytes [i]);
    return 0;
}

int
xxl_secret_password (char *out, size_t len)
{
    //  A byte at or past the last whole multiple of the alphabet's size is
    //  drawn again: every character equally likely
    const char *chars = XXL_SECRET_PASSWORD_CHARS;
    size_t count = strlen (chars);
    unsigned limit = 256 - 256 % (unsigned) count;
    unsigned char bytes [64];
    size_t made = 0;
    while (made < len) {
        if (s_random (bytes, sizeof bytes))
            return -1;
        for (size_t i = 0; i < sizeof bytes && made < len; i++)
            if (bytes [i] < limit)
                out [made++] = chars [bytes [i] % count];
    }
    out [len] = 0;
    explicit_bzero (bytes, sizeof bytes);
    return 0;
}

void
xxl_secret_sha256 (const char *text, char out [XXL_SECRET_HEX])
{
    char hex [SHA256_DIGEST_STRING_LENGTH];
    SHA256Data ((const uint8_t *) text, strlen (text), hex);
    snprintf (out, XXL_SECRET_HEX, "%s", hex);
}

bool
xxl_secret_equal (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    size_t span = la > lb? la: lb;
    volatile unsigned char diff = (unsigned char) (la != lb);
    for (size_t i = 0; i < span; i++)
        diff |= (unsigned char) ((i < la? a [i]: 0) ^ (i < lb? b [i]: 0));
    return diff == 0;
}
