/* placeholder replaced below */
#include "cli.h"
int cli_compare(int argc, char **argv) { (void)argc, (void)argv; return EXIT_USAGE; }
