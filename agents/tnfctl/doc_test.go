package main

import (
	"testing"

	"github.com/tnf-layer/tnf-layer/internal/testutil/doccheck"
)

// TestReference: docs/reference/tnfctl*.md is what cobra generates from the commands.
func TestReference(t *testing.T) { doccheck.CheckReference(t, rootCommand()) }

// TestDocumentedCommandLines: every tnfctl command line in the pages names subcommands and
// flags tnfctl has.
func TestDocumentedCommandLines(t *testing.T) {
	doccheck.CheckInvocations(t, rootCommand(), "tnfctl")
}
