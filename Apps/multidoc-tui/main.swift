print("multidoc")
