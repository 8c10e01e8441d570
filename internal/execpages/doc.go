// Package execpages gives back the pages of the process's own executable
// that starting it mapped and that it does not run again (Shed): the
// daemon once its servers have started and after each change, the
// lifeline shim once its server runs, and the `plexus mcp` bridge once it
// is connected. Every Plexus process is the one `plexus` binary, and its
// package initialisation touches code of all of it; without the shed,
// each shim and bridge counted most of the 40 MiB executable in its RSS.
package execpages
