package api

import (
	"reflect"
	"testing"

	"recon"
)

// TestPageCacheBound checks that the kept pages stay within the budget,
// the least recently used going first, and that a page of an earlier
// version never replaces a later one.
func TestPageCacheBound(t *testing.T) {
	body := make([]byte, 1000)
	cost := len(body) + len("f") + pageOverhead
	c := newPageCache(8*cost + cost/2) // room for 8 pages
	key := func(n int) pageKey { return pageKey{recon.LiveTenant(int64(n)), "f"} }
	for n := range 8 {
		c.put(key(n), 1, body)
	}
	c.get(key(0)) // used: page 1 is now the least recently used
	c.put(key(8), 1, body)
	if c.size > c.max || len(c.pages) != 8 {
		t.Fatalf("size %d of %d, %d pages; want 8", c.size, c.max, len(c.pages))
	}
	for n, kept := range []bool{true, false, true, true, true, true, true, true, true} {
		if v, _ := c.get(key(n)); (v == 1) != kept {
			t.Errorf("page %d: version %d, kept %v", n, v, kept)
		}
	}
	c.put(key(0), 5, []byte("later"))
	c.put(key(0), 4, []byte("earlier"))
	if v, b := c.get(key(0)); v != 5 || string(b) != "later" {
		t.Errorf("page 0 at %d %q, want 5 later", v, b)
	}
	c.put(key(10), 1, make([]byte, c.max/8)) // over an eighth with its key: not kept
	if v, _ := c.get(key(10)); v != noVersion {
		t.Errorf("a page over an eighth of the cache was kept")
	}
	if c := newPageCache(0); c != nil {
		t.Errorf("a cache of 0 bytes: %+v, want none", c)
	}
}

// TestFilterKeySpellsEveryField sets each field of a filter in turn: each
// gives another key, so a field added to recon.TransactionFilter and left
// out of filterKey fails here rather than serving one filter's page for
// another.
func TestFilterKeySpellsEveryField(t *testing.T) {
	seen := map[string]string{filterKey(recon.TransactionFilter{}): "none"}
	ft := reflect.TypeFor[recon.TransactionFilter]()
	zero := int64(0)
	for i := range ft.NumField() {
		var f recon.TransactionFilter
		v := reflect.ValueOf(&f).Elem().Field(i)
		switch v.Kind() {
		case reflect.Int, reflect.Int64:
			v.SetInt(1)
		case reflect.String:
			v.SetString("1")
		case reflect.Pointer:
			v.Set(reflect.ValueOf(&zero)) // 0 is not "absent"
		default:
			t.Fatalf("field %s of kind %s: teach filterKey and this test", ft.Field(i).Name, v.Kind())
		}
		k := filterKey(f)
		if other, ok := seen[k]; ok {
			t.Errorf("%s set has the key of %s: %q", ft.Field(i).Name, other, k)
		}
		seen[k] = ft.Field(i).Name
	}
	// Strings are quoted: a space inside one cannot shift the fields.
	a := filterKey(recon.TransactionFilter{AccountNumber: `1 "2"`})
	b := filterKey(recon.TransactionFilter{AccountNumber: "1", ReferenceNumber: "2"})
	if a == b {
		t.Errorf("two filters, one key %q", a)
	}
}
