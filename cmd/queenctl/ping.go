package main

import (
	"fmt"
	"time"
)

func (a *app) ping(args []string) error {
	c := a.command("ping", "", "Ask the broker whether it is healthy, and time its answer. Exit 3 when it cannot be reached.")
	adm, done, err := c.connectNoArgs(args)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	h, err := adm.Health(a.ctx)
	took := time.Since(start)
	if err != nil {
		return c.notQueen(fmt.Errorf("ping %s: %w", c.serverURL(), err))
	}
	if c.jsonOut() {
		if err := writeJSON(a.stdout, struct {
			Server  string  `json:"server"`
			Status  string  `json:"status"`
			Version string  `json:"version"`
			Millis  float64 `json:"ms"`
		}{c.serverURL(), h.Status, h.Version, float64(took.Microseconds()) / 1000}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "%s: %s (%s, version %s) in %s\n", c.serverURL(), h.Status, dash(h.Server), dash(h.Version), took.Round(time.Microsecond))
	}
	if h.Status != "healthy" {
		return fmt.Errorf("ping %s: the broker says it is %q", c.serverURL(), h.Status)
	}
	return nil
}

func (a *app) version(args []string) error {
	c := a.command("version", "", "Print queenctl's version, and the broker's status and version (informational: a\n"+
		"broker's version says nothing about what it supports).")
	adm, done, err := c.connectNoArgs(args)
	if err != nil {
		return err
	}
	defer done()
	h, err := adm.Health(a.ctx)
	if c.jsonOut() && err == nil {
		return writeJSON(a.stdout, struct {
			Client        string `json:"client"`
			Server        string `json:"server"`
			BrokerStatus  string `json:"brokerStatus"`
			BrokerVersion string `json:"brokerVersion"`
		}{clientVersion(), c.serverURL(), h.Status, h.Version})
	}
	if !c.jsonOut() {
		fmt.Fprintf(a.stdout, "queenctl %s\n", clientVersion())
	}
	if err != nil {
		return c.notQueen(fmt.Errorf("version: asking %s: %w", c.serverURL(), err))
	}
	fmt.Fprintf(a.stdout, "broker %s: %s, version %s (%s)\n", c.serverURL(), h.Status, dash(h.Version), dash(h.Server))
	return nil
}
