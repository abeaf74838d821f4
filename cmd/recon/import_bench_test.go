package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
	"recon/statement"
)

// importBenchRows is the size of the statement BenchmarkImportMemory
// imports: 1,000,000 rows, or RECON_BENCH_IMPORT_ROWS (to compare sizes).
var importBenchRows = func() int {
	if n, err := strconv.Atoi(os.Getenv("RECON_BENCH_IMPORT_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}()

// writeBenchCSV writes a CSV statement of n incoming rows to a file in dir.
func writeBenchCSV(b *testing.B, dir string, n int) (string, int64) {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("statement-%d.csv", n))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("transaction_date,amount_in,transaction_content,reference_number\n")
	for i := range n {
		fmt.Fprintf(w, "2026-09-%02d %02d:%02d:%02d,%d,NGUYEN VAN A chuyen tien DH%07d qua ung dung,FT26%012d\n",
			1+i/86400%28, i/3600%24, i/60%60, i%60, 10_000+i%500*1_000, i, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	info, _ := f.Stat()
	f.Close()
	return path, info.Size()
}

// peakHeap samples the Go heap in use every few milliseconds while fn runs
// and returns the highest sample, in MiB.
func peakHeap(fn func()) float64 {
	runtime.GC()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			mu.Lock()
			peak = max(peak, m.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return float64(peak) / (1 << 20)
}

// vmHWM is the process's peak resident memory so far, in MiB (Linux).
func vmHWM() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkImportMemory measures the memory of a statement import of
// 1,000,000 CSV rows: the streaming parse alone (ParseFunc), the whole
// import into each engine in one database transaction (statement.Import),
// and, for comparison, Parse, which holds every line. It reports the peak
// Go heap in use while each runs; run one sub-benchmark per process to read
// peak-rss-MiB (the process's VmHWM) for it alone.
func BenchmarkImportMemory(b *testing.B) {
	path, size := writeBenchCSV(b, b.TempDir(), importBenchRows)
	b.Logf("%d rows, %.1f MiB", importBenchRows, float64(size)/(1<<20))
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	report := func(b *testing.B, peak float64) {
		b.ReportMetric(peak, "peak-heap-MiB")
		b.ReportMetric(vmHWM(), "peak-rss-MiB")
		b.ReportMetric(float64(importBenchRows)/b.Elapsed().Seconds()*float64(b.N), "rows/s")
	}
	b.Run("ParseFunc", func(b *testing.B) {
		var peak float64
		for b.Loop() {
			f := open()
			n := 0
			peak = max(peak, peakHeap(func() {
				if err := statement.ParseFunc(f, statement.CSV, statement.Options{}, false, func(statement.Line) error { n++; return nil }, nil); err != nil {
					b.Fatal(err)
				}
			}))
			f.Close()
			if n != importBenchRows {
				b.Fatalf("%d rows", n)
			}
		}
		report(b, peak)
	})
	b.Run("Parse", func(b *testing.B) {
		var peak float64
		for b.Loop() {
			f := open()
			peak = max(peak, peakHeap(func() {
				lines, _, err := statement.Parse(f, statement.CSV, statement.Options{}, false)
				if err != nil || len(lines) != importBenchRows {
					b.Fatalf("%d rows, %v", len(lines), err)
				}
			}))
			f.Close()
		}
		report(b, peak)
	})
	for _, engine := range dbtest.Engines() {
		b.Run("Import/"+engine, func(b *testing.B) {
			var peak float64
			for b.Loop() {
				b.StopTimer()
				db := dbtest.OpenStore(b, engine)
				ctx := context.Background()
				co := &recon.Company{FullName: "Import", ShortName: "I", Status: recon.CompanyActive,
					Config: recon.CompanyConfig{Paycode: true, PaymentCodeFormats: []recon.PaymentCodeFormat{
						{Prefix: "DH", SuffixFrom: 7, SuffixTo: 7, CharacterType: recon.NumberOnly, IsActive: true}}}}
				if err := db.CreateCompany(ctx, co); err != nil {
					b.Fatal(err)
				}
				acct := &recon.BankAccount{CompanyID: co.ID, BankName: "VCB", AccountNumber: "1"}
				if err := db.CreateBankAccount(ctx, acct); err != nil {
					b.Fatal(err)
				}
				f := open()
				b.StartTimer()
				peak = max(peak, peakHeap(func() {
					rep, err := statement.Import(ctx, db, co.Tenant(), acct.ID, bufio.NewReaderSize(f, 64<<10), statement.CSV, statement.Options{}, false)
					if err != nil || rep.Imported != importBenchRows {
						b.Fatalf("import: %+v %v", rep, err)
					}
				}))
				f.Close()
			}
			report(b, peak)
		})
	}
}
