// Package cmdline turns a command line as a person types it into a POSIX
// shell into the argument vector Plexus starts a stdio server with, and back.
//
// No shell ever runs (R-RUN-1): Split understands quoting and escapes
// only. Shell operators, command substitution and comments, which a shell
// would act on, are refused rather than passed along as text, so that a line
// never means something different here than in the terminal it was copied
// from.
package cmdline
