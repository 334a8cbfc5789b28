package snowid

import "strings"

func mustLayout(name string, epochMs, unitMs int64, decodeOnly bool, specs ...FieldSpec) *Layout {
	l, err := NewLayout(name, epochMs, unitMs, decodeOnly, specs...)
	if err != nil {
		panic(err)
	}
	return l
}

// The built-in layouts of docs/id-format.md section 6. Only Snowid generates.
var (
	Snowid = mustLayout("snowid", 1_767_225_600_000, 1, false,
		FieldSpec{"time", RoleTime, 41}, FieldSpec{"region", RoleRegion, 2},
		FieldSpec{"host", RoleHost, 8}, FieldSpec{"sequence", RoleSequence, 12})
	Twitter = mustLayout("twitter", 1_288_834_974_657, 1, true,
		FieldSpec{"time", RoleTime, 41}, FieldSpec{"datacenter", RoleRegion, 5},
		FieldSpec{"worker", RoleHost, 5}, FieldSpec{"sequence", RoleSequence, 12})
	Discord = mustLayout("discord", 1_420_070_400_000, 1, true,
		FieldSpec{"timestamp", RoleTime, 42}, FieldSpec{"worker", RoleOther, 5},
		FieldSpec{"process", RoleOther, 5}, FieldSpec{"increment", RoleSequence, 12})
	Instagram = mustLayout("instagram", 1_314_220_021_721, 1, true,
		FieldSpec{"time", RoleTime, 41}, FieldSpec{"shard", RoleOther, 13},
		FieldSpec{"sequence", RoleSequence, 10})
	Sonyflake = mustLayout("sonyflake", 1_409_529_600_000, 10, true,
		FieldSpec{"time", RoleTime, 39}, FieldSpec{"sequence", RoleSequence, 8},
		FieldSpec{"machine", RoleOther, 16})
)

var presets = []*Layout{Snowid, Twitter, Discord, Instagram, Sonyflake}

// Preset is the built-in layout of that name; NOT_FOUND otherwise.
func Preset(name string) (*Layout, error) {
	var names []string
	for _, p := range presets {
		if p.name == name {
			return p, nil
		}
		names = append(names, p.name)
	}
	return nil, newError(CodeNotFound, "no preset layout %q (known: %s)", name, strings.Join(names, ", "))
}
