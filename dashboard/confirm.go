package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"recon"
)

// Confirmation steps. The buttons that change something for good (void,
// cancel, resolve, replay one, replay every failed one) lead to a GET page
// saying exactly what will happen; its form does the POST, with the field
// confirm=yes. A POST without that field shows the same page and changes
// nothing, so no single click (and no forged or replayed form without the
// field) acts.

// confirmField is the field of a confirmed POST.
const confirmField = "confirm"

// confirmed reports whether the POST comes from a confirmation page.
func confirmed(r *http.Request) bool { return r.PostForm.Get(confirmField) == "yes" }

// confirmItem is one line of what will happen: a message key and a value
// shown as text.
type confirmItem struct {
	Label, Value, ID string
}

type confirmView struct {
	Title, Intro string // message keys
	Items        []confirmItem
	// Action is where the form posts, with the hidden Fields (name, value).
	Action string
	Fields [][2]string
	Button string // message key
	Back   string // the page the step came from
	// Warning, when set, is said first and loudly (text, translated): an
	// overpayment, ... (exceptions.go, resolveConfirmExtras).
	Warning string
}

func (h *Handler) renderConfirm(w http.ResponseWriter, r *http.Request, q *request, v *confirmView) error {
	h.render(w, r, http.StatusOK, "confirm", h.data(r, q, v.Title, v))
	return nil
}

// notificationLine says what notification of the kind an action will
// send: the event to the active target's URL, or why none is sent (a live
// tenant without an active target; a test tenant's is held for recon
// listen), as notifyAt decides.
func (h *Handler) notificationLine(r *http.Request, q *request, kind, event string) (string, error) {
	t, err := h.Store.DeliveryTarget(r.Context(), q.caller.Tenant.ID(), kind)
	if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
		return "", err
	}
	switch {
	case t != nil && t.Active:
		return event + " → " + t.URL, nil
	case !q.caller.Livemode():
		return event + " → " + q.lang.T("c_listen"), nil
	}
	return q.lang.T("c_no_target"), nil
}

// orderItems are an order's lines on a confirmation page.
func orderItems(l lang, o *recon.Order) []confirmItem {
	return []confirmItem{
		{"order", o.InvoiceNumber, "c-invoice"},
		{"amount", l.Money(o.Amount), "c-amount"},
		{"paid", l.Money(o.PaidAmount), "c-paid"},
		{"status", l.T("st_" + o.Status), "c-status"},
		{"customer", o.CustomerID, ""},
		{"description", o.Description, "c-description"},
	}
}

// confirmOrderAction serves GET /dashboard/order/{void,cancel}?invoice=
// (and a POST of either without the confirmation): the order, its amount,
// what its status becomes and the IPN that goes out. An order the action
// cannot apply to shows the order page with the reason (409).
func (h *Handler) confirmOrderAction(w http.ResponseWriter, r *http.Request, q *request, action, invoice string) error {
	if h.Orders == nil {
		return errNotFound()
	}
	o, err := h.Store.Order(r.Context(), q.caller.Tenant, invoice)
	if err != nil {
		return err
	}
	v := &confirmView{Title: "c_" + action, Intro: "c_" + action + "_intro", Items: orderItems(q.lang, o),
		Action: "/dashboard/order/" + action, Fields: [][2]string{{"invoice", o.InvoiceNumber}}, Button: action,
		Back: "/dashboard/order?" + url.Values{"invoice": {o.InvoiceNumber}}.Encode()}
	var after, notify string
	switch action {
	case "void":
		if o.Status != recon.OrderCaptured {
			return h.renderOrder(w, r, q, invoice, http.StatusConflict, q.lang.T("c_not_captured"))
		}
		after = q.lang.T("st_" + recon.OrderCancelled)
		if notify, err = h.notificationLine(r, q, recon.DeliveryIPN, recon.IPNTransactionVoid); err != nil {
			return err
		}
	default:
		if o.Status != recon.OrderAwaitingPayment {
			return h.renderOrder(w, r, q, invoice, http.StatusConflict, q.lang.T("c_not_open"))
		}
		after, notify = q.lang.T("st_"+recon.OrderCancelled), q.lang.T("c_none_sent")
	}
	v.Items = append(v.Items, confirmItem{"c_status_after", after, "c-after"}, confirmItem{"c_notification", notify, "c-notification"})
	return h.renderConfirm(w, r, q, v)
}

// confirmVoid and confirmCancel serve GET /dashboard/order/void and
// /dashboard/order/cancel.
func (h *Handler) confirmVoid(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.confirmOrderAction(w, r, q, "void", r.URL.Query().Get("invoice"))
}

func (h *Handler) confirmCancel(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.confirmOrderAction(w, r, q, "cancel", r.URL.Query().Get("invoice"))
}

// confirmResolve is the confirmation of a resolution that passed the
// checks (resolveForm): the transfer, the action and note, and for a match
// the order's paid amount and status after it (recon.MatchPayments, as the
// store will apply it) and the ORDER_PAID that goes out when it captures.
func (h *Handler) confirmResolve(w http.ResponseWriter, r *http.Request, q *request, e *recon.Exception, v *exceptionView, in recon.ResolveInput, o *recon.Order) error {
	t := e.Transaction
	id := strconv.FormatInt(t.ID, 10)
	c := &confirmView{Title: "c_resolve", Intro: "c_resolve_intro", Action: "/dashboard/exceptions/" + id + "/resolve",
		Fields: [][2]string{{"resolve", v.Choice}, {"invoice", v.Invoice}, {"note", v.Note}, {"amount", v.Refund.Amount},
			{"bank_bin", v.Refund.BankBIN}, {"account_number", v.Refund.AccountNumber}, {"account_name", v.Refund.AccountName}}, Button: "x_resolve",
		Back: "/dashboard/exceptions/" + id,
		Items: []confirmItem{
			{"transaction", id, "c-transaction"},
			{"amount_in", q.lang.Money(t.AmountIn), "c-transfer-amount"},
			{"memo", t.Content, ""},
			{"x_action", q.lang.T("xa_" + in.Action), "c-action"},
			{"x_note", in.Note, "c-note"},
		}}
	if in.Action == recon.ResolveRefund {
		// With a receiver a refund is created (pending, or waiting for
		// approval); without, the money went back outside Recon.
		if in.Receiver.Known() {
			amount := q.lang.T("rf_everything")
			if in.Amount > 0 {
				amount = q.lang.Money(in.Amount)
			}
			c.Items = append(c.Items, confirmItem{"rf_receiver", receiverText(in.Receiver), "c-receiver"},
				confirmItem{"c_refund_amount", amount, "c-refund-amount"}, confirmItem{"c_refund_created", q.lang.T("c_refund_created_yes"), "c-refund"})
		} else {
			c.Items = append(c.Items, confirmItem{"c_refund_created", q.lang.T("c_refund_created_no"), "c-refund"})
		}
	}
	if o != nil {
		ms, err := recon.MatchPayments(o, []recon.Payment{{Amount: t.AmountIn, Rule: recon.MatchByHand}})
		if err != nil {
			return err
		}
		after := q.lang.T("st_" + recon.OrderAwaitingPayment)
		notify := q.lang.T("c_none_sent")
		if ms[0].Captured {
			after = q.lang.T("st_" + recon.OrderCaptured)
			if notify, err = h.notificationLine(r, q, recon.DeliveryIPN, recon.IPNOrderPaid); err != nil {
				return err
			}
		}
		c.Items = append(c.Items, orderItems(q.lang, o)...)
		c.Items = append(c.Items, confirmItem{"c_paid_after", q.lang.Money(ms[0].PaidTotal), "c-paid-after"},
			confirmItem{"c_status_after", after, "c-after"}, confirmItem{"c_notification", notify, "c-notification"})
	}
	if err := h.resolveConfirmExtras(r, q, e, in, o, c); err != nil {
		return err
	}
	return h.renderConfirm(w, r, q, c)
}

// confirmReplay serves GET /dashboard/notifications/{id}/replay: the
// delivery, where it goes, and that it is sent again at once.
func (h *Handler) confirmReplay(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	d, err := h.Store.Delivery(r.Context(), q.caller.Tenant, id)
	if err != nil {
		return err
	}
	to, err := h.notificationLine(r, q, d.Kind, d.Event)
	if err != nil {
		return err
	}
	sid := strconv.FormatInt(d.ID, 10)
	return h.renderConfirm(w, r, q, &confirmView{Title: "c_replay", Intro: "c_replay_intro",
		Action: "/dashboard/notifications/" + sid + "/replay", Button: "n_replay", Back: "/dashboard/notifications/" + sid,
		Items: []confirmItem{
			{"n_delivery", sid, "c-delivery"},
			{"n_kind", q.lang.T("nk_" + d.Kind), ""},
			{"status", q.lang.T("ds_" + d.Status), "c-status"},
			{"attempts", strconv.Itoa(d.Attempts), ""},
			{"c_notification", to, "c-notification"},
		}})
}

// confirmReplayFailed serves GET /dashboard/notifications/replay?since=&kind=:
// which deliveries will be sent again, and how many there are now.
func (h *Handler) confirmReplayFailed(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.replayFailedStep(w, r, q, r.URL.Query())
}

// replayFailedStep checks the replay's fields and shows its confirmation.
func (h *Handler) replayFailedStep(w http.ResponseWriter, r *http.Request, q *request, form url.Values) error {
	f, err := h.failedFilter(form)
	if err != nil {
		return err
	}
	n, err := h.Store.CountFailed(r.Context(), q.caller.Tenant, f, h.now(), recon.MaxCountedFailed)
	if err != nil {
		return err
	}
	kind := q.lang.T("any")
	if f.Kind != "" {
		kind = q.lang.T("nk_" + f.Kind)
	}
	count := q.lang.Count(n)
	if n >= recon.MaxCountedFailed {
		count += "+"
	}
	return h.renderConfirm(w, r, q, &confirmView{Title: "c_replay_failed", Intro: "c_replay_failed_intro",
		Action: "/dashboard/notifications/replay", Button: "n_replay_failed", Back: "/dashboard/notifications",
		Fields: [][2]string{{"since", strings.TrimSpace(form.Get("since"))}, {"kind", f.Kind}},
		Items: []confirmItem{
			{"n_failed_since", h.timeText(f.Since), "c-since"},
			{"n_kind", kind, "c-kind"},
			{"c_count", count, "c-count"},
		}})
}
