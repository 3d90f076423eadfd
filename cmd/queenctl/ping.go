package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// fixedVersion is the version every 0.15 broker reports on its health route, whatever its
// release: it says nothing about the broker.
const fixedVersion = "1.0.0"

// versionNote says what a reported version means, when it means less than it seems to.
func versionNote(v string) string {
	if v == fixedVersion {
		return "the version every Queen 0.15 broker reports, whatever its release"
	}
	return ""
}

// versionText is a broker's version as a line shows it, with its note.
func versionText(v string) string {
	if note := versionNote(v); note != "" {
		return v + ": " + note
	}
	return dash(v)
}

func (a *app) pingCommand(parent *cobra.Command) {
	c := a.command(parent, "ping", "Ask the broker whether it is healthy, and time its answer. Exit 3 when it cannot be reached\n"+
		"or does not answer within --timeout.")
	c.noArgs(func() error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		start := time.Now()
		h, err := ask(r, r.adm.Health)
		took := time.Since(start)
		if err != nil {
			return r.notQueen(fmt.Errorf("ping %s: %w", r.server, err))
		}
		out := struct {
			Server      string  `json:"server"`
			Status      string  `json:"status"`
			Version     string  `json:"version"`
			VersionNote string  `json:"versionNote,omitempty"`
			Millis      float64 `json:"ms"`
		}{r.server, h.Status, h.Version, versionNote(h.Version), float64(took.Microseconds()) / 1000}
		if a.structured() {
			if err := a.encode(out); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(a.stdout, "%s: %s (%s, version %s) in %s\n", r.server, clean(h.Status), clean(dash(h.Server)),
				clean(versionText(h.Version)), took.Round(time.Microsecond))
		}
		if h.Status != "healthy" {
			return fmt.Errorf("ping %s: the broker says it is %q", r.server, h.Status)
		}
		return nil
	})
}

func (a *app) versionCommand(parent *cobra.Command) {
	c := a.command(parent, "version", "Print queenctl's version, and the broker's status and version (informational: a\n"+
		"broker's version says nothing about what it supports, and every 0.15 broker reports 1.0.0).")
	c.noArgs(func() error {
		r, err := a.connect()
		if err != nil {
			return err
		}
		h, err := ask(r, r.adm.Health)
		if a.structured() && err == nil {
			return a.encode(struct {
				Client        string `json:"client"`
				Server        string `json:"server"`
				BrokerStatus  string `json:"brokerStatus"`
				BrokerVersion string `json:"brokerVersion"`
				VersionNote   string `json:"brokerVersionNote,omitempty"`
			}{clientVersion(), r.server, h.Status, h.Version, versionNote(h.Version)})
		}
		if !a.structured() {
			fmt.Fprintf(a.stdout, "queenctl %s\n", clientVersion())
		}
		if err != nil {
			return r.notQueen(fmt.Errorf("version: asking %s: %w", r.server, err))
		}
		fmt.Fprintf(a.stdout, "broker %s: %s, version %s (%s)\n", r.server, clean(h.Status), clean(versionText(h.Version)), clean(dash(h.Server)))
		return nil
	})
}
