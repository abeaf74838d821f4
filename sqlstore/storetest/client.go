package storetest

import (
	"fmt"
	"testing"

	"recon"
)

func testClient(t *testing.T, open Open) {
	t.Run("CreateAndRead", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1)
		for _, want := range []*recon.Client{{
			ID: "cl_confidential", CompanyID: c.ID, Name: "Accounting sync",
			SecretHash:   "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Scopes:       []string{recon.ScopeCompany, recon.ScopeTransactionRead, recon.ScopeOfflineAccess},
			RedirectURIs: []string{"https://app.example.com/callback", "http://127.0.0.1:8080/cb?x=1&y=a%20b", "https://x.example/a b"},
		}, {
			ID: "cl_public", CompanyID: c.ID, Name: "CLI", Scopes: []string{recon.ScopeProfile},
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
	})
	t.Run("DuplicateID", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		a, b := newCompany(t, s, 1), newCompany(t, s, 2)
		first := newClient(t, s, a.ID, "cl_1")
		// Client ids are global: another company cannot take one either.
		for _, companyID := range []int64{a.ID, b.ID} {
			err := s.CreateClient(t.Context(), &recon.Client{ID: "cl_1", CompanyID: companyID, Name: "again", Scopes: []string{recon.ScopeCompany}})
			wantCode(t, err, recon.ECONFLICT, `a client with id "cl_1" already exists`)
		}
		got, err := s.Client(t.Context(), "cl_1")
		if err != nil {
			t.Fatalf("Client: %v", err)
		}
		diff(t, "first client", first, got)
	})
	t.Run("UnknownCompany", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1)
		err := s.CreateClient(t.Context(), &recon.Client{ID: "cl_1", CompanyID: c.ID + 7, Name: "x", Scopes: []string{recon.ScopeCompany}})
		wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+7))
	})
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1)
		newClient(t, s, c.ID, "cl_1")
		_, err := s.Client(t.Context(), "cl_2")
		wantCode(t, err, recon.ENOTFOUND, `client "cl_2" not found`)
	})
	t.Run("BadLists", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1)
		for _, bad := range []*recon.Client{
			{ID: "cl_1", CompanyID: c.ID, Name: "x", Scopes: []string{"company profile"}},
			{ID: "cl_2", CompanyID: c.ID, Name: "x", Scopes: []string{""}},
			{ID: "cl_3", CompanyID: c.ID, Name: "x", Scopes: []string{recon.ScopeCompany}, RedirectURIs: []string{"https://a/\nhttps://b/"}},
		} {
			wantCode(t, s.CreateClient(t.Context(), bad), recon.EINVALID, "")
		}
	})
}
