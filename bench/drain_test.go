package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestJobCounts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("# HELP wikid_jobs Jobs in the queue, by state.\n# TYPE wikid_jobs gauge\n" +
			"wikid_jobs{state=\"dead\"} 0\nwikid_jobs{state=\"done\"} 12345\nwikid_jobs{state=\"queued\"} 9876\n" +
			"wikid_jobs{state=\"running\"} 8\nwikid_jobs_oldest_queued_age_seconds 1.5\n"))
	}))
	defer srv.Close()
	m, err := jobCounts(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if m["queued"] != 9876 || m["running"] != 8 || m["done"] != 12345 || m["dead"] != 0 {
		t.Fatalf("got %v", m)
	}
}

func TestSummarize(t *testing.T) {
	t0 := time.Unix(0, 0)
	var ss []sample
	for i := 1; i <= 100; i++ {
		ss = append(ss, sample{due: t0, sent: t0.Add(time.Millisecond), done: t0.Add(time.Duration(i) * time.Millisecond), ok: true, hit: i%2 == 0})
	}
	ss = append(ss, sample{ok: false})
	st := summarize(ss)
	if st.n != 100 || st.errors != 1 || st.hits != 50 || st.p99 != 99*time.Millisecond || st.sp99 != 98*time.Millisecond || st.max != 100*time.Millisecond {
		t.Fatalf("got %+v", st)
	}
}
