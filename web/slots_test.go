package web

import (
	"testing"

	"recon"
)

// TestSlots: at most n at once, at most the company's share each, a slot
// given back once however often release is called.
func TestSlots(t *testing.T) {
	s := NewSlots(4, 0)
	if n, per := s.Size(); n != 4 || per != 2 {
		t.Fatalf("size %d, share %d; want 4, 2", n, per)
	}
	r1, err := s.Acquire(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(1); recon.ErrorCode(err) != recon.EUNAVAILABLE {
		t.Fatalf("third of company 1: %v; want EUNAVAILABLE", err)
	}
	r1()
	r1() // no second slot given back
	if _, err := s.Acquire(1); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if _, err := s.Acquire(1); recon.ErrorCode(err) != recon.EUNAVAILABLE {
		t.Fatalf("a double release gave back two slots: %v", err)
	}
	for _, c := range []int64{2, 2} {
		if _, err := s.Acquire(c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Acquire(3); recon.ErrorCode(err) != recon.EUNAVAILABLE {
		t.Fatalf("a fifth slot: %v", err)
	}
	if n, per := NewSlots(0, 0).Size(); n != DefaultSlots || per != 1 {
		t.Fatalf("defaults: %d, %d", n, per)
	}
}
