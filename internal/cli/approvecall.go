package cli

import (
	"context"
	"fmt"
	"time"
)

// approveCall lists the tool calls waiting for the user's approval (id
// ""), or approves or refuses one.
func (a *app) approveCall(ctx context.Context, id string, deny, asJSON bool) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	if id == "" {
		waiting, err := c.CallApprovals(ctx)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(a.stdout(), waiting)
		}
		if len(waiting) == 0 {
			a.progressf("no tool call is waiting for your approval")
			return nil
		}
		t := &table{header: []string{"ID", "TOOL", "CLIENT", "ARGUMENTS", "WAITS"}}
		for _, w := range waiting {
			client := w.Client
			if client == "" {
				client = "-"
			}
			t.add(w.ID, w.Name, client, oneLine(w.Arguments), time.Until(w.Until).Round(time.Second).String())
		}
		return t.write(a.stdout(), a.outputWidth())
	}
	if err := c.DecideCall(ctx, id, !deny); err != nil {
		return fmt.Errorf("deciding %s: %w", oneLine(id), err)
	}
	if deny {
		fmt.Fprintf(a.stdout(), "refused %s\n", oneLine(id))
	} else {
		fmt.Fprintf(a.stdout(), "approved %s\n", oneLine(id))
	}
	return nil
}
