#!/bin/bash
# Before/after on one machine: bc63f67 (before issue 14's work) against HEAD, interleaved.
OUT=/tmp/ba/results.jsonl
URL=http://127.0.0.1:18080
OLD=/tmp/ba/old-bench-curlew
NEW=/tmp/ba/new-bench-curlew
AHC=/work/main/Benchmarks/.build/release/bench-ahc
CURLC=/work/main/Benchmarks/.build/release/bench-curl-c
CLIENTS="curlew-dispatch-engine curlew-runloop-epoll-engine curlew-runloop-engine curlew-dispatch curlew-runloop-epoll curlew-runloop"
one() { # tag binary client path conc extra...
  local tag=$1 bin=$2 client=$3 path=$4 conc=$5; shift 5
  local line
  line=$(timeout 120 $bin --client $client --url $URL/$path --scenario get --concurrency $conc "$@" 2>/dev/null | head -1)
  echo "{\"round\":$ROUND,\"tag\":\"$tag\",\"client\":\"$client\",\"path\":\"$path\",\"concurrency\":$conc,\"result\":${line:-null}}" >> $OUT
}
for ROUND in 1 2 3; do
  for conc in 1 16 128 1024; do
    if [ $conc = 1 ]; then size="--duration-seconds 3 --warmup-requests 300"; else size="--duration-seconds 3 --warmup-requests 2000"; fi
    one ref $CURLC curl-c small $conc $size
    one ref $AHC async-http-client small $conc $size
    for client in $CLIENTS; do
      if [ $((ROUND % 2)) = 1 ]; then order="old new"; else order="new old"; fi
      for tag in $order; do
        bin=$OLD; [ $tag = new ] && bin=$NEW
        one $tag $bin $client small $conc $size
      done
    done
  done
  one ref $CURLC curl-c 16m 1 --requests 100 --warmup-requests 5
  one ref $AHC async-http-client 16m 1 --requests 100 --warmup-requests 5
  for client in $CLIENTS; do
    for tag in old new; do
      bin=$OLD; [ $tag = new ] && bin=$NEW
      one $tag $bin $client 16m 1 --requests 100 --warmup-requests 5
    done
  done
done
echo done >> /tmp/ba/done
