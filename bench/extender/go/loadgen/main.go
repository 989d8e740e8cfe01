// loadgen: a closed-loop HTTP load generator for extender benchmarks.
//
// C keep-alive connections each POST the same pre-serialised body back to back
// for a fixed duration (after a warm-up) and record every latency. It prints one
// JSON object: requests, errors, rps, p50/p99 in milliseconds. Standard library only.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

type result struct {
	Requests int            `json:"requests"`
	Errors   int            `json:"errors"`
	Seconds  float64        `json:"seconds"`
	RPS      float64        `json:"rps"`
	P50ms    float64        `json:"p50_ms"`
	P99ms    float64        `json:"p99_ms"`
	Status   map[string]int `json:"status"`
	FirstErr string         `json:"first_error,omitempty"`
}

func main() {
	url := flag.String("url", "", "URL to POST to")
	bodyFile := flag.String("body", "", "file holding the request body")
	conc := flag.Int("c", 4, "concurrent keep-alive connections")
	dur := flag.Duration("d", 5*time.Second, "measured duration")
	warm := flag.Duration("warmup", time.Second, "unmeasured warm-up")
	maxReq := flag.Int("max", 1000000, "stop after this many measured requests")
	expect := flag.String("expect", "", "substring every 200 reply must contain")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}

	var mu sync.Mutex
	var lat []time.Duration
	res := result{Status: map[string]int{}}
	measuring := false
	var count int
	start := time.Now()
	var wg sync.WaitGroup
	stopAt := start.Add(*warm + *dur)
	var measureStart time.Time
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			for time.Now().Before(stopAt) {
				t0 := time.Now()
				resp, err := client.Post(*url, "application/json", bytes.NewReader(body))
				var code string
				var bad string
				if err != nil {
					code, bad = "transport", err.Error()
				} else {
					data, rerr := io.ReadAll(resp.Body)
					resp.Body.Close()
					code = fmt.Sprint(resp.StatusCode)
					if rerr != nil {
						bad = rerr.Error()
					} else if resp.StatusCode != 200 {
						bad = fmt.Sprintf("status %d: %.200s", resp.StatusCode, data)
					} else if *expect != "" && !bytes.Contains(data, []byte(*expect)) {
						bad = fmt.Sprintf("reply lacks %q: %.200s", *expect, data)
					}
				}
				d := time.Since(t0)
				mu.Lock()
				if !measuring && time.Since(start) >= *warm {
					measuring = true
					measureStart = time.Now()
				}
				if measuring {
					if count >= *maxReq {
						mu.Unlock()
						break
					}
					count++
					res.Status[code]++
					if bad != "" {
						res.Errors++
						if res.FirstErr == "" {
							res.FirstErr = bad
						}
					}
				}
				mu.Unlock()
				if measuring {
					local = append(local, d)
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if measureStart.IsZero() {
		measureStart = start
	}
	elapsed := time.Since(measureStart).Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.Requests = len(lat)
	res.Seconds = elapsed
	if elapsed > 0 {
		res.RPS = float64(len(lat)) / elapsed
	}
	if n := len(lat); n > 0 {
		res.P50ms = float64(lat[n/2].Microseconds()) / 1000
		// Nearest-rank percentile: the smallest latency at or above 99% of the samples.
		res.P99ms = float64(lat[(n*99+99)/100-1].Microseconds()) / 1000
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}
