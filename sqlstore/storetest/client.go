package storetest

import (
	"fmt"
	"testing"

	"recon"
)

func testClient(t *testing.T, open Open) {
	setup := func(t *testing.T) *tokenFixture { return newTokenFixture(t, open) }
	run(t, "CreateAndRead", open, testClientCreateAndRead)
	run(t, "DuplicateID", open, testClientDuplicateID)
	run(t, "UnknownCompany", open, testClientUnknownCompany)
	run(t, "NotFound", open, testClientNotFound)
	run(t, "BadLists", open, testClientBadLists)
	run(t, "ListAndDelete", setup, testClientListAndDelete)
}

func testClientCreateAndRead(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	for _, want := range []*recon.Client{{
		ID: "cl_confidential", Company: c.ID, Name: "Accounting sync",
		SecretHash:   "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Scopes:       []string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeOfflineAccess},
		RedirectURIs: []string{"https://app.example.com/callback", "http://127.0.0.1:8080/cb?x=1&y=a%20b", "https://x.example/a b"},
	}, {
		ID: "cl_public", Company: c.ID, Name: "CLI", Scopes: []string{recon.ScopeProfile},
	}} {
		if err := s.CreateClient(t.Context(), want); err != nil {
			t.Fatalf("CreateClient: %v", err)
		}
		recent(t, "CreatedAt", want.CreatedAt)
		got, err := s.Client(t.Context(), want.ID)
		if err != nil {
			t.Fatalf("Client: %v", err)
		}
		wantUTC(t, "CreatedAt", got.CreatedAt)
		diff(t, "client", want, got)
	}
}

func testClientDuplicateID(t *testing.T, s recon.Store) {
	a, b := newCompany(t, s, 1), newCompany(t, s, 2)
	first := newClient(t, s, a.ID, "cl_1")
	// Client ids are global: another company cannot take one either.
	for _, companyID := range []int64{a.ID, b.ID} {
		err := s.CreateClient(t.Context(), &recon.Client{ID: "cl_1", Company: companyID, Name: "again", Scopes: []string{recon.ScopeCompany}})
		wantCode(t, err, recon.ECONFLICT, `a client with id "cl_1" already exists`)
	}
	got, err := s.Client(t.Context(), "cl_1")
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	diff(t, "first client", first, got)
}

func testClientUnknownCompany(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	err := s.CreateClient(t.Context(), &recon.Client{ID: "cl_1", Company: c.ID + 7, Name: "x", Scopes: []string{recon.ScopeCompany}})
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+7))
}

func testClientNotFound(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	newClient(t, s, c.ID, "cl_1")
	_, err := s.Client(t.Context(), "cl_2")
	wantCode(t, err, recon.ENOTFOUND, `client "cl_2" not found`)
}

func testClientBadLists(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	for _, bad := range []*recon.Client{
		{ID: "cl_1", Company: c.ID, Name: "x", Scopes: []string{"company profile"}},
		{ID: "cl_2", Company: c.ID, Name: "x", Scopes: []string{""}},
		{ID: "cl_3", Company: c.ID, Name: "x", Scopes: []string{recon.ScopeCompany}, RedirectURIs: []string{"https://a/\nhttps://b/"}},
	} {
		wantCode(t, s.CreateClient(t.Context(), bad), recon.EINVALID, "")
	}
}

func testClientListAndDelete(t *testing.T, f *tokenFixture) {
	// company 1 with client cl_1, a user
	ctx := t.Context()
	other := newCompany(t, f.s, 2)
	newClient(t, f.s, other.ID, "cl_other")
	live2 := newClient(t, f.s, f.company.ID, "cl_2")
	test := &recon.Client{ID: recon.TestClientPrefix + "cl_3", Company: f.company.ID, Name: "test", Scopes: []string{recon.ScopeCompany}, Test: true}
	if err := f.s.CreateClient(ctx, test); err != nil {
		t.Fatal(err)
	}
	list := func(companyID int64, test bool, offset, limit int) ([]string, int64) {
		t.Helper()
		cs, total, err := f.s.Clients(ctx, companyID, test, offset, limit)
		if err != nil {
			t.Fatalf("Clients: %v", err)
		}
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		return ids, total
	}
	// Each company and mode sees its own clients only, oldest first, paged.
	ids, total := list(f.company.ID, false, 0, 10)
	diff(t, "live clients", []string{"cl_1", "cl_2"}, ids)
	if total != 2 {
		t.Errorf("live total %d, want 2", total)
	}
	ids, total = list(f.company.ID, false, 1, 1)
	diff(t, "second page", []string{"cl_2"}, ids)
	if total != 2 {
		t.Errorf("paged total %d, want 2", total)
	}
	ids, _ = list(f.company.ID, true, 0, 10)
	diff(t, "test clients", []string{test.ID}, ids)
	ids, _ = list(other.ID, false, 0, 10)
	diff(t, "other company's clients", []string{"cl_other"}, ids)
	cs, _, err := f.s.Clients(ctx, f.company.ID, false, 1, 1)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Clients: %v %v", cs, err)
	}
	wantUTC(t, "CreatedAt", cs[0].CreatedAt)
	diff(t, "listed client", live2, cs[0])

	// Another company's client, and the other mode's, cannot be deleted.
	wantCode(t, f.s.DeleteClient(ctx, f.company.ID, false, "cl_other"), recon.ENOTFOUND, `client "cl_other" not found`)
	wantCode(t, f.s.DeleteClient(ctx, f.company.ID, false, test.ID), recon.ENOTFOUND, "")
	wantCode(t, f.s.DeleteClient(ctx, f.company.ID, true, "cl_1"), recon.ENOTFOUND, "")
	if _, err := f.s.Client(ctx, "cl_other"); err != nil {
		t.Fatalf("another company's client: %v", err)
	}

	// Deleting takes the client's tokens along and moves the epoch, so
	// that a cached caller of its tokens is dropped everywhere.
	f.create(t, f.session("sig-1", "req-1"))
	before, err := f.s.AuthEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteClient(ctx, f.company.ID, false, "cl_1"); err != nil {
		t.Fatalf("DeleteClient: %v", err)
	}
	if after, err := f.s.AuthEpoch(ctx); err != nil || after <= before {
		t.Errorf("deleting a client: epoch %d → %d (%v)", before, after, err)
	}
	_, err = f.s.TokenSession(ctx, recon.TokenAccess, "sig-1")
	wantCode(t, err, recon.ENOTFOUND, "")
	_, err = f.s.Client(ctx, "cl_1")
	wantCode(t, err, recon.ENOTFOUND, "")
	wantCode(t, f.s.DeleteClient(ctx, f.company.ID, false, "cl_1"), recon.ENOTFOUND, "")
	if err := f.s.DeleteClient(ctx, f.company.ID, true, test.ID); err != nil {
		t.Fatalf("DeleteClient(test): %v", err)
	}
	ids, total = list(f.company.ID, false, 0, 10)
	diff(t, "live clients after", []string{"cl_2"}, ids)
	if total != 1 {
		t.Errorf("total after %d", total)
	}
}
