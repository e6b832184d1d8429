#!/usr/bin/env bash
# Proves that the tests can fail: applies one-line mutations of the library, one at a time, to a
# scratch copy of the repository, and runs only the tests that must catch each one. Every mutant
# must be caught (its tests fail, crash or time out); a mutant that survives, or no longer applies
# (its search string is not found exactly once), makes the script fail.
#
#   Scripts/mutants.sh            # every mutant, then a Markdown table (also in $CURLEW_MUTANTS_DIR/mutants.md)
#   Scripts/mutants.sh 11         # only the mutants whose claim column is "11"
#   Scripts/mutants.sh --list     # the list, without running anything
#   Scripts/mutants.sh --check    # that every mutant still applies (its search string found exactly once); no build (CI)
#   Scripts/mutants.sh --build    # that every mutant applies and builds: all applied to the working tree at once and
#                                 # built in its .build (incrementally, no tests), then the files restored (CI)
#
# First the scratch copy (the working tree's files, no build folders) is built and the union of all the mutants' tests is run unmutated: they
# must pass, or a "caught" would mean nothing. Then, per mutant: apply, build (incrementally: one
# scratch build folder serves every mutant), run its tests with a time limit, restore. Mutants run
# one after another (the build and the tests already use every core). Not part of .ci/run: it
# rebuilds once per mutant (about 20 minutes on 2 cores with the scratch build kept, 13 more for its first build).
#
# Mutations change function bodies, never a default argument or an `@inlinable` body: those are
# compiled into the calling modules, which an incremental build does not recompile when only the
# library changed (a mutated default argument then silently tests the old code).
#
# Environment: CURLEW_MUTANTS_DIR (scratch folder, default /tmp/curlew-mutants),
# CURLEW_MUTANT_TIMEOUT (seconds per mutant's test run, default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=${CURLEW_MUTANTS_DIR:-/tmp/curlew-mutants}
limit=${CURLEW_MUTANT_TIMEOUT:-300}
source_copy="$scratch/src"
build="$scratch/build"

claims=() files=() searches=() replacements=() filters=() descriptions=()

# mutant CLAIM DESCRIPTION FILE SEARCH REPLACEMENT TEST-FILTER
#   CLAIM: the lesson claim (Docs/Lessons.md) the mutant breaks, or "-" for other behaviour.
#   SEARCH must occur exactly once in FILE; it is replaced literally by REPLACEMENT.
#   TEST-FILTER: the `swift test --filter` regular expression of the tests that must fail.
mutant() {
    claims+=("$1") descriptions+=("$2") files+=("$3") searches+=("$4") replacements+=("$5") filters+=("$6")
}

# --- The network thread (claims 1-7) ---
mutant 1 "the dispatch backend's read sources deliver on a global queue, not the scheduler's" \
    Sources/CurlewDispatch/SourcePerSocketWatcher.swift \
    'source = DispatchSource.makeReadSource(fileDescriptor: socket, queue: self.queue)' \
    'source = DispatchSource.makeReadSource(fileDescriptor: socket, queue: .global())' \
    'DispatchLessons/suspendedQueue'
mutant 1 "the network thread runs performed blocks on a global queue, beside its run loop" \
    Sources/CurlewRunLoop/NetworkThread.swift \
    'CFRunLoopPerformBlock(loop, modeArgument, block)' \
    'DispatchQueue.global().async(execute: block)' \
    'NetworkThreadLessons/contextMustRun'
mutant 2 "the network thread's keep-alive source is never added to its run loop" \
    Sources/CurlewRunLoop/NetworkThread.swift \
    'CFRunLoopAddSource(loop, keepAlive.source, self.runModeName)' \
    '_ = keepAlive.source' \
    'NetworkThreadLessons/keepAliveStyles'
mutant 3 "every RunLoopScheduler made with the defaults gets a network thread of its own" \
    Sources/CurlewRunLoop/RunLoopScheduler.swift \
    'self.init(context: .networkThread(thread), modes: modes, sockets: sockets)' \
    'self.init(context: .networkThread(thread === NetworkThread.shared ? NetworkThread() : thread), modes: modes, sockets: sockets)' \
    'NetworkThreadLessons/createdOnceLazilyNamed'
mutant 3 "a network thread starts when it is created, not on first use" \
    Sources/CurlewRunLoop/NetworkThread.swift \
    'self.runModeName = RunLoopModeList.cfName(runMode)' \
    'self.runModeName = RunLoopModeList.cfName(runMode); self.start()' \
    'NetworkThreadLessons/createdOnceLazilyNamed'
mutant 4 "perform does not wake the sleeping run loop (no CFRunLoopWakeUp)" \
    Sources/CurlewRunLoop/NetworkThread.swift \
    'CFRunLoopWakeUp(loop)' \
    '_ = loop' \
    'NetworkThreadLessons/oneThreadSleepsWhenIdle'
mutant 5 "every run-loop mode but the common modes becomes the default mode" \
    Sources/CurlewRunLoop/RunLoopModeList.swift \
    'if mode == .default { return kCFRunLoopDefaultMode }' \
    'if mode != .common { return kCFRunLoopDefaultMode }' \
    'NetworkThreadLessons/modes'
mutant 6 "a transfer's commands run on the calling thread (the app's main thread) instead of the context" \
    Sources/CurlewTransport/Engine/MultiDriver.swift \
    'self.scheduler.perform { self.enter(deferringDueTimeouts: deferringDueTimeouts) { work(transfer) } }' \
    'self.enter(deferringDueTimeouts: deferringDueTimeouts) { work(transfer) }' \
    'RejectedDesignLessons/mainRunLoop'
mutant 6 "every RunLoopScheduler made with the defaults gets a network thread of its own (one per operation)" \
    Sources/CurlewRunLoop/RunLoopScheduler.swift \
    'self.init(context: .networkThread(thread), modes: modes, sockets: sockets)' \
    'self.init(context: .networkThread(thread === NetworkThread.shared ? NetworkThread() : thread), modes: modes, sockets: sockets)' \
    'RejectedDesignLessons/threadPerOperation'
mutant 7 "Curlew.defaultEngine runs on the network thread instead of a dispatch queue" \
    Sources/Curlew/Curlew.swift \
    'TransferEngine(scheduler: DispatchScheduler(label: "curlew.default-engine"))' \
    'TransferEngine(scheduler: RunLoopScheduler())' \
    'DispatchLessons/threadsAndThePool'

# --- The operation (claims 8-15) ---
mutant 8 "start() waits until the operation has finished (a synchronous operation)" \
    Sources/CurlewOperations/RequestOperation.swift \
    'self.apply { $0.start(isReady: isReady, preparing: preparing) }' \
    'self.apply { $0.start(isReady: isReady, preparing: preparing) }; self.waitUntilFinished()' \
    'OperationLessons/asynchronousStart'
mutant 9 "finishing does not post isFinished" \
    Sources/CurlewOperations/RequestOperation+StateMachine.swift \
    'if (previous == .finished) != (next == .finished) { posts.append(.isFinished) }' \
    'if (previous == .finished) != (next == .finished) { _ = posts }' \
    'OperationLessons/withoutQueue'
mutant 10 "start posts no did-start notification" \
    Sources/CurlewOperations/RequestOperation+Lifecycle.swift \
    'if state.attemptCount == 1 { self.enqueue(Self.didStartNotification, on: state.notificationQueue) }' \
    '_ = state.notificationQueue' \
    'OperationLessons/start'
mutant 11 "cancelling an executing operation does not cancel its transfer" \
    Sources/CurlewOperations/RequestOperation+Lifecycle.swift \
    'case .cancel(let transfer): transfer.cancel()' \
    'case .cancel(let transfer): _ = transfer' \
    'OperationLessons/cancel|CurlewOperationsTests\.CancellationTests'
mutant 12 "a resumed transfer sends no Range header" \
    Sources/CurlewTransport/Transfer/Transfer+Configuration.swift \
    'list.append("Range: bytes=\(resume.offset)-")' \
    '_ = resume.offset' \
    'OperationLessons/pauseAndResume|PauseResumeTests'
mutant 12 "pausing an operation leaves its transfer running" \
    Sources/CurlewOperations/RequestOperation+Lifecycle.swift \
    'case .pause(let transfer): transfer.pause()' \
    'case .pause(let transfer): _ = transfer' \
    'OperationLessons/pauseAndResume'
mutant 13 "finishing posts no did-finish notification" \
    Sources/CurlewOperations/RequestOperation+Notifications.swift \
    'NotificationCenter.default.post(name: name, object: self)' \
    'if name != Self.didFinishNotification { NotificationCenter.default.post(name: name, object: self) }' \
    'OperationLessons/finish'
mutant 14 "responses are serialized on the network context" \
    Sources/CurlewOperations/RequestOperation+Lifecycle.swift \
    'ProcessingQueues.run(work) { lane in self.storage.withLock { $0.processingQueue = lane.queue } }' \
    'work(ProcessingQueues.lanes[0])' \
    'OperationLessons/processingQueue'
mutant 15 "the completion queue the caller chose is ignored" \
    Sources/CurlewOperations/RequestOperation+Lifecycle.swift \
    'completionQueue: self.completionQueue ?? self.defaultCompletionQueue,' \
    'completionQueue: self.defaultCompletionQueue,' \
    'OperationLessons/completionBlockThread'
mutant 19 "a batch member's handler runs outside the group the batch waits on" \
    Sources/CurlewBatching/OperationBatch+Members.swift \
    'request.completionGroup = handlerGroup' \
    '_ = handlerGroup' \
    'OrderingTests/ownCompletionReturnsFirst|GroupLessons/batch'
mutant 19 "the batch's final operation does not depend on its members" \
    Sources/CurlewBatching/OperationBatch.swift \
    'completionOperation.addDependency(members[index])' \
    '_ = members[index]' \
    'GroupLessons/batch|OrderingTests'

# --- The engine, the backends and the tests the issue found weak ---
mutant - "Transfer.cancel from another thread does nothing" \
    Sources/CurlewTransport/Transfer/Transfer.swift \
    'self.onContext { $0.contextCancel(TransferError.cancelled(url: $0.currentURL)) }' \
    '_ = self.currentURL' \
    'CurlewConformanceTests\.CancellationTests'
mutant - "a new transfer's 0 ms timer request waits for the scheduler's timer (a round trip) instead of running in the same visit" \
    Sources/CurlewTransport/Engine/EngineCore.swift \
    'if done < Self.roundsPerHandle * self.placement.handleCount, !self.isShutDown,' \
    'if done < 0, !self.isShutDown,' \
    'LifecycleTests/startedOnContext'
mutant - "CURLOPT_PIPEWAIT on plain http too" \
    Sources/CurlewTransport/Transfer/HandleSetup.swift \
    'case .automatic: scheme == "https"' \
    'case .automatic: true' \
    'NoWaitingTests/smallBesideSlow\('
mutant - "easy handles that recorded an errno go back to the pool" \
    Sources/CurlewTransport/Engine/EasyHandlePool.swift \
    'guard easy.info(long: CURLINFO_OS_ERRNO) ?? 0 == 0 else { return }' \
    '_ = easy.info(long: CURLINFO_OS_ERRNO)' \
    'FailureSequenceTests'
mutant - "a redirect the delegate refused is followed anyway" \
    Sources/CurlewTransport/Transfer/Transfer+Callbacks.swift \
    'guard let decided = delegate.transfer(self, willRedirect: head, to: next.head) else { return nil }' \
    'let decided = delegate.transfer(self, willRedirect: head, to: next.head) ?? next.head' \
    'RedirectTests/delegateStops'
mutant - "a RunLoopScheduler dropped without shutdown leaves its sockets open" \
    Sources/CurlewRunLoop/RunLoopScheduler.swift \
    'leftovers.watcher?.tearDown()' \
    '_ = leftovers.watcher' \
    'SchedulerConformanceTests/droppedWithoutShutdown'

only=${1:-}
if [ "$only" = "--list" ]; then
    for i in "${!claims[@]}"; do
        printf '%s\t%s\t%s\t%s\n' "${claims[$i]}" "${files[$i]}" "${descriptions[$i]}" "${filters[$i]}"
    done
    exit 0
fi

if [ "$only" = "--check" ]; then
    stale=0
    for i in "${!claims[@]}"; do
        count=$(grep -cF -- "${searches[$i]}" "${files[$i]}" 2>/dev/null || true)
        if [ "${count:-0}" -ne 1 ]; then
            echo "STALE [claim ${claims[$i]}] ${descriptions[$i]}: found ${count:-0} times in ${files[$i]}"
            stale=$((stale + 1))
        fi
    done
    echo "${#claims[@]} mutants, $stale stale"
    [ "$stale" -eq 0 ]
    exit
fi

# Replaces the one occurrence of $2 in file $1 by $3 (literally); fails unless there is exactly one.
apply() {
    local file=$1 search=$2 replacement=$3 content count
    content=$(<"$file")
    count=$(grep -cF -- "$search" "$file" || true)
    [ "$count" -eq 1 ] || return 1
    printf '%s\n' "${content/"$search"/"$replacement"}" >"$file"
}

# --build: every mutant applied to the working tree and built in one incremental build of the
# library (no tests). Mutants whose search strings overlap another's in the same file go to a later
# round with a build of its own. A combined build that fails names the errors; each mutant then
# builds alone in the full run. The files are restored (and touched, so the next build recompiles
# them) however the script ends.
if [ "$only" = "--build" ]; then
    backup=$(mktemp -d)
    mutated=($(printf '%s\n' "${files[@]}" | sort -u))
    for path in "${mutated[@]}"; do mkdir -p "$backup/$(dirname "$path")"; cp -p "$path" "$backup/$path"; done
    restore() {
        for path in "${mutated[@]}"; do cp -p "$backup/$path" "$path"; touch "$path"; done
        rm -rf "$backup"
    }
    trap restore EXIT
    pending=("${!claims[@]}") round=0 failed=0
    while [ ${#pending[@]} -gt 0 ]; do
        round=$((round + 1)) later=() applied=0
        for i in "${pending[@]}"; do
            if apply "${files[$i]}" "${searches[$i]}" "${replacements[$i]}"; then
                applied=$((applied + 1))
            elif [ "$(grep -cF -- "${searches[$i]}" "$backup/${files[$i]}" || true)" -eq 1 ]; then
                later+=("$i")  # another mutant changed its text: next round
            else
                echo "STALE [claim ${claims[$i]}] ${descriptions[$i]}: not found exactly once in ${files[$i]}"
                failed=$((failed + 1))
            fi
        done
        if [ "$applied" -eq 0 ]; then
            for i in "${later[@]}"; do echo "STALE [claim ${claims[$i]}] ${descriptions[$i]}: never applies"; done
            failed=$((failed + ${#later[@]}))
            break
        fi
        echo "== round $round: $applied mutants applied; building"
        if ! swift build >"${TMPDIR:-/tmp}/curlew-mutants-build.log" 2>&1; then
            grep -E 'error:' "${TMPDIR:-/tmp}/curlew-mutants-build.log" | sort -u | head -20
            echo "round $round does not build"
            failed=$((failed + 1))
        fi
        for path in "${mutated[@]}"; do cp -p "$backup/$path" "$path"; done
        pending=("${later[@]}")
    done
    echo "${#claims[@]} mutants, $round build(s), $failed failure(s)"
    [ "$failed" -eq 0 ]
    exit
fi

seconds() { date +%s; }

# Brings the scratch copy up to date with the working tree (tracked and new files, no build folders):
# only changed files are copied, in place, so the scratch build stays incremental from run to run.
sync_copy() {
    local listed="$scratch/files.txt" path
    (cd "$root" && git ls-files --cached --others --exclude-standard | grep -v -e '^\.build' -e '/\.build' | sort -u) >"$listed"
    mkdir -p "$source_copy"
    while IFS= read -r path; do
        [ -f "$root/$path" ] || continue
        if ! cmp -s "$root/$path" "$source_copy/$path"; then
            mkdir -p "$(dirname "$source_copy/$path")"
            cp -p "$root/$path" "$source_copy/$path"
        fi
    done <"$listed"
    (cd "$source_copy" && find . -type f -not -path './.build*' -printf '%P\n' | sort) | comm -23 - "$listed" |
        while IFS= read -r path; do rm -f "$source_copy/$path"; done
}

mkdir -p "$scratch"
echo "== copying the working tree to $source_copy (build folder $build)"
sync_copy
bash "$source_copy/Scripts/ensure-dependencies.sh"
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-$((4 * $(nproc 2>/dev/null || echo 2)))}"
build_copy() { swift build --build-tests --package-path "$source_copy" --scratch-path "$build" >"$scratch/build.log" 2>&1; }
# The test binary is run directly, not through `swift test`: that starts it in a process group of
# its own, which `timeout` would not stop (a hung mutant's tests outlived the script).
run_tests() {
    (cd "$source_copy" && timeout --kill-after=10 "$limit" "$build/debug/CurlewPackageTests.xctest" \
        --testing-library swift-testing --filter "$1") >"$scratch/test.log" 2>&1
}

selected=()
for i in "${!claims[@]}"; do
    if [ -z "$only" ] || [ "${claims[$i]}" = "$only" ]; then selected+=("$i"); fi
done
[ ${#selected[@]} -gt 0 ] || { echo "no mutant for claim $only" >&2; exit 1; }

started=$(seconds)
echo "== building the unmutated copy"
build_copy || { tail -30 "$scratch/build.log"; echo "the unmutated copy does not build" >&2; exit 1; }
union=$(for i in "${selected[@]}"; do printf '%s\n' "${filters[$i]}"; done | sort -u | paste -sd'|')
echo "== the mutants' tests, unmutated: $union"
if ! run_tests "$union"; then
    grep -E '✘' "$scratch/test.log" | head -20 || tail -30 "$scratch/test.log"
    echo "the mutants' tests fail without a mutation: fix them first" >&2
    exit 1
fi

rows=()
survivors=0
for i in "${selected[@]}"; do
    file="$source_copy/${files[$i]}"
    original="$root/${files[$i]}"
    mutant_started=$(seconds)
    echo "== [claim ${claims[$i]}] ${descriptions[$i]}"
    if ! apply "$file" "${searches[$i]}" "${replacements[$i]}"; then
        result="STALE: search string not found exactly once"
        survivors=$((survivors + 1))
    elif ! build_copy; then
        grep -E 'error:' "$scratch/build.log" | head -5 || true
        result="DID NOT BUILD"
        survivors=$((survivors + 1))
    else
        set +e
        run_tests "${filters[$i]}"
        status=$?
        set -e
        if [ "$status" -eq 0 ]; then
            result="**MISSED**"
            survivors=$((survivors + 1))
        elif [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
            result="caught (timed out after ${limit} s)"
        elif grep -q 'Program crashed' "$scratch/test.log"; then
            result="caught (the test process crashed: $(grep -m1 -oE '_dispatchPreconditionTest|precondition|Fatal error|fatalError' "$scratch/test.log" || echo "signal"))"
        elif grep -qE '✘|failed' "$scratch/test.log"; then
            issues=$(grep -cE '^✘ Test .* recorded an issue' "$scratch/test.log" || true)
            result="caught ($issues issue$([ "$issues" = 1 ] || echo s))"
        else
            result="caught (exit $status)"
        fi
    fi
    cp -p "$original" "$file"
    touch "$file"
    elapsed=$(( $(seconds) - mutant_started ))
    echo "   $result, ${elapsed} s"
    rows+=("| ${claims[$i]} | ${descriptions[$i]} (\`${files[$i]#Sources/}\`) | \`${filters[$i]//|/\\|}\` | $result | ${elapsed} s |")
done
build_copy || true  # leave the scratch build unmutated

total=$(( $(seconds) - started ))
{
    echo "| Claim | Mutant | Tests that must fail | Result | Time |"
    echo "|---|---|---|---|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "${#selected[@]} mutants, $((${#selected[@]} - survivors)) caught, in $((total / 60)) min $((total % 60)) s (with the unmutated build and run)."
} | tee "$scratch/mutants.md"
[ "$survivors" -eq 0 ]
