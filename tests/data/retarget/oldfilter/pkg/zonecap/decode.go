package zonecap

import "encoding/json"

func decode(raw []byte, args *ZoneCapArgs) error {
	return json.Unmarshal(raw, args)
}
