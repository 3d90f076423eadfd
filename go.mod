module github.com/queenmq/queen-go

go 1.26.0
