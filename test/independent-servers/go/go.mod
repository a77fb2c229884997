module momoserver

go 1.22
