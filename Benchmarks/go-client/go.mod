module curlew/bench-go

go 1.19
