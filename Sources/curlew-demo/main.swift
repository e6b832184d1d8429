print("curlew-demo")
