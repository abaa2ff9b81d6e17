from bench.runner import main

main()
