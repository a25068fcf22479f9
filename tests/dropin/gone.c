/* tests/dropin/gone.c: a library a test component depends on and then
 * cannot find (component-load.sh). */
int collc_gone(void);
int collc_gone(void) { return 0; }
