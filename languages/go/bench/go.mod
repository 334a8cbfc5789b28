module github.com/snowid/snowid/languages/go/bench

go 1.25

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/snowid/snowid/languages/go v0.0.0
	github.com/sony/sonyflake v1.2.0
)

replace github.com/snowid/snowid/languages/go => ../
