package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/recon-vn/recon/client"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestGettingStarted runs docs/getting-started.md as written: every `recon`
// command of its sh blocks must exist with the flags it is given (a renamed
// command or flag fails here), and, against a real demo server (`recon
// serve --demo` on a fresh database), the commands are run in the page's
// order (the shop's signed checkout, which the page does with curl and
// openssl, is made with the SDK, which signs the same fields) and what each
// prints must be in the text block the page shows after it, ids, codes and
// times aside. `recon listen` (it runs until stopped) is only checked.
func TestGettingStarted(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "getting-started.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := docBlocks(string(raw))

	// Every command exists, with its flags and arguments.
	var commands int
	for _, b := range blocks {
		for _, line := range b.commands {
			args := shellWords(line, map[string]string{})
			root := newRootCmd(&app{getenv: func(string) string { return "" }})
			cmd, rest, err := root.Find(args[1:])
			if err != nil || cmd == root {
				t.Errorf("docs/getting-started.md: %q: no such command (%v)", line, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("docs/getting-started.md: %q: %v", line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("docs/getting-started.md: %q: %v", line, err)
			}
			commands++
		}
	}
	if commands < 10 {
		t.Fatalf("only %d recon commands found in docs/getting-started.md", commands)
	}

	// Run them on a demo, in order.
	dbURL := dbtest.NewURL(t, "sqlite")
	base, out, _ := startServer(t, dbURL, "--demo")
	m := regexp.MustCompile(`Test merchant: +(\S+) +secret_key: (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the demo banner has no test merchant:\n%s", out)
	}
	vars := map[string]string{"RECON": base, "MERCHANT": m[1], "SECRET": m[2], "INVOICE": "SHOP-1001"}
	shopCheckout := func() {
		c, err := client.New(base, client.WithMerchant(m[1], m[2]))
		if err != nil {
			t.Fatal(err)
		}
		form, err := client.NewCheckoutForm(base, m[2], client.Checkout{MerchantID: m[1], InvoiceNumber: "SHOP-1001", Amount: 250000, Description: "Ao dai lua"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateCheckout(context.Background(), form); err != nil {
			t.Fatalf("the page's checkout: %v", err)
		}
		o, err := c.GetOrder(context.Background(), "SHOP-1001")
		if err != nil {
			t.Fatal(err)
		}
		vars["CODE"] = o.Payment.Code
	}
	var ran int
	for _, b := range blocks {
		if strings.Contains(b.text, "/v1/checkout/init") {
			shopCheckout()
		}
		var printed []string
		for _, line := range b.commands {
			args := shellWords(line, vars)
			if args[1] == "listen" {
				continue
			}
			got, err := cli(t, dbURL, args[1:]...)
			if err != nil {
				got += "recon: " + err.Error() + "\n"
			}
			printed = append(printed, strings.Split(strings.TrimRight(got, "\n"), "\n")...)
			ran++
		}
		if b.output == "" {
			continue
		}
		for _, line := range printed {
			if !inOutput(b.output, line) {
				t.Errorf("docs/getting-started.md: %q printed %q, which is not in the page's output:\n%s", b.commands, line, b.output)
			}
		}
	}
	if ran < 9 {
		t.Fatalf("only %d commands of docs/getting-started.md ran", ran)
	}
	// What the page's steps did, seen from the store.
	db := dbtest.OpenURL(t, dbURL)
	tn, err := db.TestTenant(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if o, err := db.Order(context.Background(), tn.ID, "SHOP-1001"); err != nil || o.Status != recon.OrderCaptured {
		t.Fatalf("the page's checkout after its transfer: %+v %v", o, err)
	}
}

// docBlock is an sh block of the page: its recon commands (continuation
// lines joined), and the text block that follows it before the next sh
// block ("" when none).
type docBlock struct {
	text     string // the sh block
	commands []string
	output   string
}

func docBlocks(doc string) []docBlock {
	var blocks []docBlock
	fence := regexp.MustCompile("(?ms)^```(sh|text)\n(.*?)^```\n")
	for _, m := range fence.FindAllStringSubmatch(doc, -1) {
		if m[1] == "text" {
			if len(blocks) > 0 && blocks[len(blocks)-1].output == "" {
				blocks[len(blocks)-1].output = m[2]
			}
			continue
		}
		b := docBlock{text: m[2]}
		joined := strings.ReplaceAll(m[2], "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "recon ") {
				b.commands = append(b.commands, line)
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// shellWords splits a command line as sh does for what the page writes:
// words, '…' and "…" quoting, $NAME expanded from vars (else "1"), and a
// # after a space starting a comment.
func shellWords(line string, vars map[string]string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			cur.WriteString(expand(line[i+1:i+1+j], vars))
			i += j + 1
			inWord = true
		case c == '$':
			j := i + 1
			for j < len(line) && (line[j] == '_' || 'A' <= line[j] && line[j] <= 'Z') {
				j++
			}
			cur.WriteString(expand(line[i:j], vars))
			i = j - 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(line)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func expand(s string, vars map[string]string) string {
	return regexp.MustCompile(`\$[A-Z_]+`).ReplaceAllStringFunc(s, func(v string) string {
		if x, ok := vars[v[1:]]; ok {
			return x
		}
		return "1"
	})
}

// inOutput reports whether line is one of the lines of the page's output,
// ids, codes, references and times aside (a word holding a digit matches
// any such word; … in the page matches anything; runs of spaces and tabs
// are one space).
func inOutput(output, line string) bool {
	norm := func(s string) string {
		s = regexp.MustCompile(`[0-9A-Za-z]*[0-9][0-9A-Za-z]*`).ReplaceAllString(s, "#")
		return strings.TrimSpace(regexp.MustCompile(`[ \t]+`).ReplaceAllString(s, " "))
	}
	got := norm(line)
	for _, want := range strings.Split(output, "\n") {
		parts := strings.Split(norm(want), "…")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		if regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got) {
			return true
		}
	}
	return false
}
