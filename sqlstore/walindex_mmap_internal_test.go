//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMapWALIndexKeepsOneDescriptor: a -shm file that is missing, or not
// yet sized, is not mapped (key reads then go to the database); one tried
// again, or mapped again, reuses the descriptor first opened, so that a
// retry costs no descriptor (none is ever closed: walindex_mmap.go).
func TestMapWALIndexKeepsOneDescriptor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recon.db-shm")
	if _, err := mapWALIndex(path); err == nil {
		t.Fatal("a missing -shm file was mapped")
	}
	if err := os.WriteFile(path, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	kept := func() *shmFile {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		shmFiles.Lock()
		defer shmFiles.Unlock()
		return shmFiles.m[shmKey(&st)]
	}
	for range 2 {
		if _, err := mapWALIndex(path); err == nil {
			t.Fatal("a -shm file of 100 bytes was mapped: reading its first page would fault")
		}
	}
	first := kept()
	if first == nil || first.mem != nil {
		t.Fatalf("after two tries on a short file, kept %+v, want its descriptor, unmapped", first)
	}
	if err := os.Truncate(path, 32768); err != nil {
		t.Fatal(err)
	}
	mem, err := mapWALIndex(path)
	if err != nil {
		t.Fatalf("a sized -shm file: %v", err)
	}
	again, err := mapWALIndex(path)
	if err != nil || &again[0] != &mem[0] {
		t.Fatalf("mapped again: %v, same mapping %v; want the first mapping", err, err == nil && &again[0] == &mem[0])
	}
	if f := kept(); f != first {
		t.Fatalf("the descriptor kept changed from %d to %d", first.fd, f.fd)
	}
	// The mapping is shared: what is written to the file is seen.
	if err := os.WriteFile(path, append([]byte{7}, make([]byte, 32767)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if mem[0] != 7 {
		t.Fatalf("the mapping reads %d after the file's first byte became 7", mem[0])
	}
}
