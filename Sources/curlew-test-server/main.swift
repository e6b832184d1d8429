print("curlew-test-server")
