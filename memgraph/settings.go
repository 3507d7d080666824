package memgraph

// ShowCoordinatorSettingsQuery lists the coordinators' settings (Memgraph v3.12.0
// coordinator_instance.cpp ShowCoordinatorSettings): one row per setting, both columns strings.
const ShowCoordinatorSettingsQuery = "SHOW COORDINATOR SETTINGS"

const (
	colSettingName  = "setting_name"
	colSettingValue = "setting_value"
)

// Setting is one row of SHOW COORDINATOR SETTINGS.
type Setting struct {
	Name  string
	Value string
}

// SetCoordinatorSettingQuery renders SET COORDINATOR SETTING with both operands as string
// literals, the only form Memgraph accepts ("Setting name should be a string literal").
func SetCoordinatorSettingQuery(name, value string) string {
	return "SET COORDINATOR SETTING " + quoteString(name) + " TO " + quoteString(value)
}

// ParseCoordinatorSettings reads SHOW COORDINATOR SETTINGS like ParseInstances: every row needs a
// non-empty string setting_name and a string setting_value, or it is a KindProtocol error.
func ParseCoordinatorSettings(columns []string, rows [][]any) ([]Setting, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colSettingName, colSettingValue)
	if err != nil {
		return nil, err
	}
	out := make([]Setting, 0, len(rows))
	for i, row := range rows {
		r := rowReader{row: row, index: i, col: col}
		s := Setting{Name: r.str(colSettingName), Value: r.str(colSettingValue)}
		if r.err != nil {
			return nil, r.err
		}
		if s.Name == "" {
			return nil, protocolError("SHOW COORDINATOR SETTINGS row %d has an empty setting_name", i)
		}
		out = append(out, s)
	}
	return out, nil
}

// ReplicationMode is the AS clause of REGISTER INSTANCE (Memgraph v3.12.0
// cypher_main_visitor.cpp: ASYNC, STRICT_SYNC, otherwise SYNC).
type ReplicationMode string

const (
	ModeSync       ReplicationMode = "" // no AS clause: Memgraph's default
	ModeAsync      ReplicationMode = "ASYNC"
	ModeStrictSync ReplicationMode = "STRICT_SYNC"
)

// asClause renders the mode's AS clause, with its leading space, or "" for SYNC.
func (m ReplicationMode) asClause() string {
	switch m {
	case ModeAsync, ModeStrictSync:
		return " AS " + string(m)
	}
	return ""
}
