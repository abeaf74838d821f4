package dashboard

import (
	"fmt"
	"net/http"
	"time"

	"recon"
)

// chartDays is how many days the home chart shows.
const chartDays = 30

type homeView struct {
	Today, Month recon.DayFlow
	Attention    *recon.Attention
	// ManyExceptions: the open exceptions reach the counted bound.
	ManyExceptions bool
	Chart          *chart
	Days           []recon.DayFlow // the chart's figures, newest first
	// Lists are the transactions lists today's and this month's tiles
	// count (links.go): each tile opens the list of what it counts.
	Lists [2]tileLists
}

// home serves GET /dashboard/: the money of today and this month, what needs
// attention, and the chart. A user who may not read money data sees none.
func (h *Handler) home(w http.ResponseWriter, r *http.Request, q *request) error {
	d := h.data(r, q, "home", nil)
	if !q.caller.May(recon.ActionReadMoney) {
		h.render(w, r, http.StatusOK, "home", d)
		return nil
	}
	today := h.now().In(h.Location)
	monthStart := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	first := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1-chartDays)
	if monthStart.Before(first) {
		first = monthStart
	}
	flows, err := h.Store.DayFlows(r.Context(), q.caller.Tenant, first.Format(recon.DateLayout), today.Format(recon.DateLayout))
	if err != nil {
		return err
	}
	att, err := h.Store.Attention(r.Context(), q.caller.Tenant)
	if err != nil {
		return err
	}
	v := &homeView{Attention: att, Today: flows[len(flows)-1], ManyExceptions: att.OpenExceptions >= recon.MaxCountedExceptions}
	v.Month.Day = monthStart.Format(recon.DateLayout)
	v.Lists = [2]tileLists{newTileLists(today.Format(recon.DateLayout), today.Format(recon.DateLayout)),
		newTileLists(v.Month.Day, today.Format(recon.DateLayout))}
	for _, f := range flows {
		if f.Day >= v.Month.Day {
			v.Month = v.Month.Add(f)
		}
	}
	last := flows[len(flows)-chartDays:]
	v.Chart = newChart(last, q.lang)
	for i := len(last) - 1; i >= 0; i-- {
		v.Days = append(v.Days, last[i])
	}
	d.Data = v
	h.render(w, r, http.StatusOK, "home", d)
	return nil
}

// chart is a server-rendered SVG of daily money in and out (bars) and the
// match rate (a line), in a fixed viewBox that scales to the screen.
type chart struct {
	Width, Height, Top, Bottom, Left int
	Bars                             []bar
	RatePoints                       string // polyline points
	MaxLabel                         string
	Ticks                            []tick
}

type bar struct {
	X, InY, InH, OutY, OutH, W int
	Title                      string
}

type tick struct {
	X     int
	Label string
}

func newChart(days []recon.DayFlow, l lang) *chart {
	c := &chart{Width: 640, Height: 240, Top: 16, Bottom: 208, Left: 8}
	var peak int64 = 1
	for _, d := range days {
		peak = max(peak, d.In, d.Out)
	}
	c.MaxLabel = l.Money(peak)
	plot := c.Bottom - c.Top
	step := (c.Width - c.Left) / len(days)
	scale := func(v int64) int { return int(float64(v) / float64(peak) * float64(plot)) }
	for i, d := range days {
		x := c.Left + i*step
		in, out := scale(d.In), scale(d.Out)
		if d.In > 0 {
			y := c.Bottom - int(float64(d.Matched)/float64(d.In)*float64(plot))
			c.RatePoints += fmt.Sprintf("%d,%d ", x+step/2, y)
		}
		c.Bars = append(c.Bars, bar{X: x + 1, W: step/2 - 1, InY: c.Bottom - in, InH: in, OutY: c.Bottom - out, OutH: out,
			Title: fmt.Sprintf("%s: %s %s, %s %s, %s %s", d.Day, l.T("money_in"), l.Money(d.In), l.T("money_out"), l.Money(d.Out), l.T("match_rate"), rate(d))})
		if i%7 == 0 || i == len(days)-1 && i%7 >= 4 {
			c.Ticks = append(c.Ticks, tick{X: x, Label: d.Day[5:]})
		}
	}
	return c
}

// rate is the share of money in that matched, in percent ("–" with none).
func rate(d recon.DayFlow) string {
	if d.In == 0 {
		return "–"
	}
	return fmt.Sprintf("%d%%", d.Matched*100/d.In)
}
