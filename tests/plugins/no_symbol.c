/*  no_symbol.c -- a shared object without the xxl_handler_plugin entry
    point: the agent logs "missing symbol" and goes on.  */

int no_symbol_here (void);
int no_symbol_here (void) { return 42; }
