module secbuf

go 1.19
