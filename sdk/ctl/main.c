/*  xxl-ctl -- command-line client of the xxl scheduler; all logic is in
    libctl behind xxl_ctl.h (xxl_ctl_main) so tests can link it.
*/

#include "xxl_ctl.h"

#include <czmq.h>

int
main (int argc, char **argv)
{
    //  A command-line tool: let Ctrl-C end it at once (e.g. `log cat -f`)
    //  instead of czmq's interrupt flag
    zsys_handler_set (NULL);
    return xxl_ctl_main (argc, argv, stdout, stderr);
}
