module weatherproxy

go 1.22
