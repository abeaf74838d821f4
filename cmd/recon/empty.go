package main

import "fmt"

// none is the text form of an empty list: one line saying so ("no
// exceptions"), instead of nothing a newcomer could take for a hang or a
// failure (docs/getting-started.md). --json prints the empty list as always.
func (a *app) none(what string) error {
	_, err := fmt.Fprintln(a.stdout, "no "+what)
	return err
}
