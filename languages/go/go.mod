module github.com/snowid/snowid/languages/go

go 1.25
