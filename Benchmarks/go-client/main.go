// bench-go: Go's standard net/http client ("go-net-http"), the fastest client measured on this
// machine kind, as a peer in every committed run.
//
// Same command line and result JSON as the Swift and C clients (BenchKit's BenchOptions and
// ClientResult): C goroutines each keep one request in flight on one shared http.Client whose
// Transport keeps up to C idle connections per host; each response body is read to its end and dropped
// (io.Copy to io.Discard, so `stream` is `get`). Latency
// percentiles are exact. `lateness`: a goroutine re-arms a 1 ms timer and records how late it fired
// (Go has no main thread: this is the runtime's scheduling lateness). `batch` is not supported.
// Standard library only; built by Scripts/bench.sh when `go` is installed.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const idleSettle = 250 * time.Millisecond // BenchOptions.idleSettleSeconds
const maximumWarmup = 5 * time.Second     // BenchOptions.maximumWarmupSeconds

type options struct {
	client, url, scenario, caFile              string
	concurrency, connections, requests, warmup int
	duration                                   time.Duration
	bodyBytes                                  int
}

type percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

type result struct {
	BytesReceived              int64        `json:"bytesReceived"`
	Client                     string       `json:"client"`
	Concurrency                int          `json:"concurrency"`
	CPUSystemMicros            int64        `json:"cpuSystemMicros"`
	CPUUserMicros              int64        `json:"cpuUserMicros"`
	ElapsedSeconds             float64      `json:"elapsedSeconds"`
	Errors                     int          `json:"errors"`
	InvoluntaryContextSwitches int64        `json:"involuntaryContextSwitches"`
	Latency                    percentiles  `json:"latency"`
	MainThreadLateness         *percentiles `json:"mainThreadLateness,omitempty"`
	MaxRSSKiB                  int64        `json:"maxRSSKiB"`
	Note                       string       `json:"note"`
	Requests                   int          `json:"requests"`
	Scenario                   string       `json:"scenario"`
	StartupRSSKiB              *int64       `json:"startupRSSKiB,omitempty"`
	ThreadsPeak                int          `json:"threadsPeak"`
	VoluntaryContextSwitches   int64        `json:"voluntaryContextSwitches"`
}

func usage(format string, arguments ...any) {
	fmt.Fprintf(os.Stderr, format+"\nusage: --client NAME --url URL --scenario get|stream|post|h2|idle|lateness|batch "+
		"--concurrency C [--connections K] [--requests N] [--duration-seconds S] [--warmup-requests W] [--body-bytes B] [--ca-file PATH]\n", arguments...)
	os.Exit(2)
}

func parse(arguments []string) options {
	values := map[string]string{}
	known := map[string]bool{"--client": true, "--url": true, "--scenario": true, "--concurrency": true, "--connections": true, "--requests": true,
		"--duration-seconds": true, "--warmup-requests": true, "--body-bytes": true, "--ca-file": true}
	for index := 0; index < len(arguments); index += 2 {
		if !known[arguments[index]] {
			usage("unknown argument %q", arguments[index])
		}
		if index+1 >= len(arguments) {
			usage("%s needs a value", arguments[index])
		}
		values[arguments[index]] = arguments[index+1]
	}
	integer := func(flag string, minimum int) (int, bool) {
		text, ok := values[flag]
		if !ok {
			return 0, false
		}
		value, err := strconv.Atoi(text)
		if err != nil || value < minimum {
			usage("%s must be an integer >= %d, not %q", flag, minimum, text)
		}
		return value, true
	}
	o := options{client: values["--client"], url: values["--url"], scenario: values["--scenario"], caFile: values["--ca-file"]}
	if o.client == "" || o.url == "" || o.scenario == "" {
		usage("missing --client, --url or --scenario")
	}
	switch o.scenario {
	case "get", "stream", "post", "h2", "idle", "lateness", "batch":
	default:
		usage("unknown scenario %q (get, stream, post, h2, idle, lateness, batch)", o.scenario)
	}
	concurrency, ok := integer("--concurrency", 1)
	if !ok {
		usage("missing --concurrency")
	}
	o.concurrency = concurrency
	o.connections = concurrency
	if connections, ok := integer("--connections", 1); ok {
		o.connections = connections
	}
	o.requests, _ = integer("--requests", 1)
	if text, ok := values["--duration-seconds"]; ok {
		seconds, err := strconv.ParseFloat(text, 64)
		if err != nil || seconds <= 0 {
			usage("--duration-seconds must be a positive number, not %q", text)
		}
		o.duration = time.Duration(seconds * float64(time.Second))
	}
	if o.requests == 0 && o.duration == 0 {
		if o.scenario == "idle" {
			o.duration = 5 * time.Second
		} else {
			o.requests = 10_000
		}
	}
	if warmup, ok := integer("--warmup-requests", 0); ok {
		o.warmup = warmup
	} else if o.scenario == "idle" {
		o.warmup = 0
	} else if o.requests > 0 {
		o.warmup = min(o.requests/10, 1000)
	} else {
		o.warmup = 1000
	}
	o.bodyBytes = 1024
	if bodyBytes, ok := integer("--body-bytes", 0); ok {
		o.bodyBytes = bodyBytes
	}
	return o
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

type resourceUsage struct {
	user, system, voluntary, involuntary int64
	maxRSSKiB                            int64
}

func rusage() resourceUsage {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return resourceUsage{user: r.Utime.Sec*1_000_000 + r.Utime.Usec, system: r.Stime.Sec*1_000_000 + r.Stime.Usec,
		voluntary: r.Nvcsw, involuntary: r.Nivcsw, maxRSSKiB: r.Maxrss}
}

// residentKiB is the resident set now (/proc/self/statm's second field, in pages), or nil when unreadable.
func residentKiB() *int64 {
	text, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return nil
	}
	fields := strings.Fields(string(text))
	if len(fields) < 2 {
		return nil
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return nil
	}
	kib := pages * int64(os.Getpagesize()) / 1024
	return &kib
}

func threadCount() int {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	return len(entries)
}

func summarize(samples []float64) percentiles {
	if len(samples) == 0 {
		return percentiles{}
	}
	sort.Float64s(samples)
	at := func(fraction float64) float64 {
		index := int(fraction*float64(len(samples)-1) + 0.5)
		return samples[index]
	}
	return percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), P999: at(0.999), Max: samples[len(samples)-1]}
}

func main() {
	o := parse(os.Args[1:])
	note := fmt.Sprintf("Go %s net/http: one http.Client, MaxIdleConnsPerHost = --connections (default C; below C also MaxConnsPerHost), C goroutines each with one request in flight",
		runtime.Version())
	if o.scenario == "batch" {
		emit(result{Client: o.client, Scenario: o.scenario, Concurrency: o.concurrency, MaxRSSKiB: rusage().maxRSSKiB,
			Note: "unsupported: batches are a Curlew feature"})
		return
	}
	// No MaxConnsPerHost where C goroutines cannot exceed it anyway (its bookkeeping costs a little).
	maxConns := 0
	if o.connections < o.concurrency {
		maxConns = o.connections
	}
	transport := &http.Transport{MaxIdleConnsPerHost: o.connections, MaxConnsPerHost: maxConns, ForceAttemptHTTP2: true,
		DisableCompression: true}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			usage("cannot read --ca-file: %v", err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		transport.TLSClientConfig = &tls.Config{RootCAs: roots}
	}
	client := &http.Client{Transport: transport}
	body := bytes.Repeat([]byte("x"), o.bodyBytes)
	startupRSS := residentKiB() // set up, nothing sent yet

	var mutex sync.Mutex
	var latencies []float64
	var completed, errors int
	var bytesReceived int64
	var notH2 int64
	measuring := o.warmup == 0 && o.scenario != "idle"
	var start time.Time
	var startUsage resourceUsage
	begin := func() {
		measuring = true
		start = time.Now()
		startUsage = rusage()
	}
	if measuring {
		begin()
	}
	warmupDone := 0
	warmupStarted := time.Now()
	done := make(chan struct{})
	var stopped atomic.Bool
	threadsPeak := threadCount()
	go func() { // thread sampler, every 10 ms
		for !stopped.Load() {
			if count := threadCount(); count > threadsPeak {
				mutex.Lock()
				threadsPeak = count
				mutex.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var lateness []float64
	if o.scenario == "lateness" {
		go func() {
			for !stopped.Load() {
				armed := time.Now().Add(time.Millisecond)
				time.Sleep(time.Millisecond)
				late := float64(time.Since(armed).Microseconds())
				mutex.Lock()
				if measuring {
					lateness = append(lateness, late)
				}
				mutex.Unlock()
			}
		}()
	}

	finishedOnce := sync.Once{}
	finish := func() { finishedOnce.Do(func() { close(done) }) }
	one := func() (time.Duration, int64, bool) {
		var request *http.Request
		if o.scenario == "post" {
			request, _ = http.NewRequest(http.MethodPost, o.url, bytes.NewReader(body))
			request.Header.Set("Content-Type", "application/octet-stream")
		} else {
			request, _ = http.NewRequest(http.MethodGet, o.url, nil)
		}
		began := time.Now()
		response, err := client.Do(request)
		if err != nil {
			return time.Since(began), 0, false
		}
		count, err := io.Copy(io.Discard, response.Body)
		response.Body.Close()
		if o.scenario == "h2" && response.ProtoMajor != 2 {
			atomic.AddInt64(&notH2, 1)
		}
		return time.Since(began), count, err == nil && response.StatusCode >= 200 && response.StatusCode < 300
	}

	if o.scenario == "idle" {
		for index := 0; index < o.concurrency; index++ {
			go func() { one() }()
		}
		time.Sleep(idleSettle)
		begin()
		time.Sleep(o.duration)
		end := rusage()
		stopped.Store(true)
		emit(result{Client: o.client, Scenario: o.scenario, Concurrency: o.concurrency,
			CPUUserMicros: end.user - startUsage.user, CPUSystemMicros: end.system - startUsage.system,
			ElapsedSeconds: time.Since(start).Seconds(), MaxRSSKiB: end.maxRSSKiB, ThreadsPeak: threadsPeak,
			VoluntaryContextSwitches:   end.voluntary - startUsage.voluntary,
			InvoluntaryContextSwitches: end.involuntary - startUsage.involuntary, Note: note})
		return
	}

	for index := 0; index < o.concurrency; index++ {
		go func() {
			for !stopped.Load() {
				latency, count, ok := one()
				mutex.Lock()
				if !measuring {
					warmupDone++
					if warmupDone >= o.warmup || time.Since(warmupStarted) > maximumWarmup {
						begin()
					}
				} else if !stopped.Load() {
					completed++
					bytesReceived += count
					if !ok {
						errors++
					}
					latencies = append(latencies, float64(latency.Microseconds()))
					if (o.requests > 0 && completed >= o.requests) || (o.duration > 0 && time.Since(start) >= o.duration) {
						stopped.Store(true)
						finish()
					}
				}
				mutex.Unlock()
			}
		}()
	}
	<-done
	end := rusage()
	mutex.Lock()
	defer mutex.Unlock()
	elapsed := time.Since(start).Seconds()
	if notH2 > 0 {
		note += fmt.Sprintf("; %d responses (warm-up included) did not use HTTP/2", notH2)
	}
	out := result{Client: o.client, Scenario: o.scenario, Concurrency: o.concurrency, Requests: completed, Errors: errors,
		ElapsedSeconds: elapsed, BytesReceived: bytesReceived, Latency: summarize(latencies),
		CPUUserMicros: end.user - startUsage.user, CPUSystemMicros: end.system - startUsage.system,
		MaxRSSKiB: end.maxRSSKiB, ThreadsPeak: threadsPeak, VoluntaryContextSwitches: end.voluntary - startUsage.voluntary,
		InvoluntaryContextSwitches: end.involuntary - startUsage.involuntary, Note: note, StartupRSSKiB: startupRSS}
	if o.scenario == "lateness" {
		summary := summarize(lateness)
		out.MainThreadLateness = &summary
	}
	emit(out)
	os.Exit(0)
}

func emit(r result) {
	line, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot encode the result:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(line, '\n'))
}
