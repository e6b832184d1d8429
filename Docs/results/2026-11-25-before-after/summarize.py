import json, statistics, collections
rows=[json.loads(l) for l in open('runs.jsonl')]
v=collections.defaultdict(dict)
cpu=collections.defaultdict(dict)
for r in rows:
    res=r['result']
    if not res or res.get('errors'): 
        print('bad', r['tag'], r['client'], r['path'], r['concurrency']); continue
    key=(r['path'], r['concurrency'], r['client'], r['tag'])
    rate=res['requests']/res['elapsedSeconds']
    if r['path']=='16m': rate=res['bytesReceived']/res['elapsedSeconds']/1e6
    v[key][r['round']]=rate
    cpu[key][r['round']]=(res['cpuUserMicros']+res['cpuSystemMicros'])/res['requests']
def med(d): return statistics.median(d.values())
def fmt(x, path): return f'{x/1000:.1f}k' if path=='small' else f'{x/1000:.2f}k'
clients=['curlew-dispatch-engine','curlew-runloop-epoll-engine','curlew-runloop-engine','curlew-dispatch','curlew-runloop-epoll','curlew-runloop']
for path, concs in [('small',[1,16,128,1024]),('16m',[1])]:
    for c in concs:
        ahc=v.get((path,c,'async-http-client','ref'),{}); cc=v.get((path,c,'curl-c','ref'),{})
        print(f'\n{path} C={c}: curl-c {fmt(med(cc),path) if cc else "-"} AHC {fmt(med(ahc),path) if ahc else "-"}')
        for cl in clients:
            o=v.get((path,c,cl,'old'),{}); n=v.get((path,c,cl,'new'),{})
            if not o or not n: continue
            rs=[n[k]/o[k] for k in n if k in o]
            ao=[o[k]/ahc[k] for k in o if k in ahc]; an=[n[k]/ahc[k] for k in n if k in ahc]
            print(f'  {cl:30} old {fmt(med(o),path):>7} ({statistics.median(ao):.2f}x AHC) {med(cpu[(path,c,cl,"old")]):6.1f}us  new {fmt(med(n),path):>7} ({statistics.median(an):.2f}x AHC) {med(cpu[(path,c,cl,"new")]):6.1f}us  new/old {statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})')
